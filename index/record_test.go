package index

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

const h1 = Hash("blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262")

func fileState(h Hash) *State {
	return &State{Hash: h, Size: 3, MTime: 1, Mode: 0o644, Type: TypeFile}
}

func TestValidate(t *testing.T) {
	target := uint64(3)
	good := map[string]Record{
		"open":          {Kind: KindOpen, Window: "w1", Tool: "Bash"},
		"close":         {Kind: KindClose, Window: "w1"},
		"before file":   {Kind: KindBefore, Window: "w1", Path: "a/b.go", State: fileState(h1)},
		"before absent": {Kind: KindBefore, Window: "w1", Path: "new", State: &State{Type: TypeAbsent}},
		"after dir":     {Kind: KindAfter, Window: "w1", Path: "d", State: &State{Type: TypeDir, Mode: 0o1755}},
		"skip":          {Kind: KindSkip, Window: "w1", Path: "big.bin", State: &State{Type: TypeFile, Size: 1 << 30}, Reason: "over size limit"},
		"outside":       {Kind: KindOutside, Path: "x", State: fileState(h1), Image: ImageBefore},
		"rewind":        {Kind: KindRewind, Op: "op1", Target: &target},
		"fifo":          {Kind: KindAfter, Window: "w1", Path: "p", State: &State{Type: TypeFIFO, Mode: 0o600}},
		"chardev":       {Kind: KindAfter, Window: "w1", Path: "null", State: &State{Type: TypeChar, Mode: 0o666, Rdev: 0x103}},
		"interrupted":   {Kind: KindClose, Window: "w1", Reason: ReasonInterrupted},
		"by process":    {Kind: KindBefore, Window: "w1", Path: "a", State: fileState(h1), By: ByProcess},
		"by guess":      {Kind: KindSkip, Window: "w1", Path: "a", State: &State{Type: TypeFile}, Reason: "r", By: ByGuess},
		"ctime":         {Kind: KindBefore, Window: "w1", Path: "a", State: fileState(h1), CTime: 1764579000000000000},
		"outside ctime": {Kind: KindOutside, Path: "x", State: fileState(h1), Image: ImageBefore, CTime: 1},
	}
	for name, r := range good {
		r.V, r.Seq, r.Time = Version, 1, t0
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := map[string]Record{
		"version":            {V: 2, Kind: KindOpen, Window: "w"},
		"no window":          {Kind: KindOpen},
		"open with path":     {Kind: KindOpen, Window: "w", Path: "a"},
		"before no window":   {Kind: KindBefore, Path: "a", State: fileState(h1)},
		"before no state":    {Kind: KindBefore, Window: "w", Path: "a"},
		"file no hash":       {Kind: KindAfter, Window: "w", Path: "a", State: fileState("")},
		"absent with hash":   {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: TypeAbsent, Hash: h1}},
		"dir with hash":      {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: TypeDir, Hash: h1}},
		"bad type":           {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: "door"}},
		"fifo with hash":     {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: TypeFIFO, Hash: h1}},
		"fifo with rdev":     {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: TypeFIFO, Rdev: 5}},
		"mode bits":          {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: TypeDir, Mode: 0o40755}},
		"negative size":      {Kind: KindAfter, Window: "w", Path: "a", State: &State{Type: TypeAbsent, Size: -1}},
		"skip no reason":     {Kind: KindSkip, Window: "w", Path: "a", State: &State{Type: TypeFile}},
		"outside in window":  {Kind: KindOutside, Window: "w", Path: "a", State: fileState(h1), Image: ImageAfter},
		"outside no image":   {Kind: KindOutside, Path: "a", State: fileState(h1)},
		"rewind no target":   {Kind: KindRewind, Op: "op"},
		"unknown kind":       {Kind: "snapshot", Window: "w"},
		"ctime after":        {Kind: KindAfter, Window: "w", Path: "a", State: fileState(h1), CTime: 5},
		"ctime negative":     {Kind: KindBefore, Window: "w", Path: "a", State: fileState(h1), CTime: -5},
		"open with reason":   {Kind: KindOpen, Window: "w", Reason: ReasonInterrupted},
		"close other reason": {Kind: KindClose, Window: "w", Reason: "tired"},
		"open with by":       {Kind: KindOpen, Window: "w", By: ByProcess},
		"outside with by":    {Kind: KindOutside, Path: "a", State: fileState(h1), Image: ImageAfter, By: ByGuess},
		"unknown by":         {Kind: KindAfter, Window: "w", Path: "a", State: fileState(h1), By: "magic"},
		"dotdot":             {Kind: KindAfter, Window: "w", Path: "../etc/passwd", State: fileState(h1)},
		"absolute":           {Kind: KindAfter, Window: "w", Path: "/etc/passwd", State: fileState(h1)},
	}
	for name, r := range bad {
		if r.V == 0 {
			r.V = Version
		}
		r.Seq, r.Time = 1, t0
		if err := r.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	r := Record{V: 9, Seq: 1, Time: t0, Kind: KindOpen, Window: "w"}
	if err := r.Validate(); !errors.Is(err, ErrVersion) {
		t.Errorf("unknown version error %v is not ErrVersion", err)
	}
}

func TestValidatePath(t *testing.T) {
	for _, p := range []string{"a", "a/b/c.go", "with space/ü.txt", ".git", "a/.hidden", "a..b"} {
		if err := ValidatePath(p); err != nil {
			t.Errorf("ValidatePath(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", "/a", "a//b", "a/", "./a", "a/./b", "..", "a/../b", "a/..", "a\x00b"} {
		if err := ValidatePath(p); err == nil {
			t.Errorf("ValidatePath(%q) accepted", p)
		}
	}
}

func TestJSONForm(t *testing.T) {
	r := Record{V: 1, Seq: 7, Time: t0, Kind: KindBefore, Window: "toolu_01", Path: "new.go", State: &State{Type: TypeAbsent}}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"seq":7,"time":"2026-12-01T09:00:00Z","kind":"before","window":"toolu_01","path":"new.go","hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}`
	if string(b) != want {
		t.Errorf("JSON form\n got %s\nwant %s", b, want)
	}
	back, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Path != r.Path || back.State.Type != TypeAbsent || back.Hash != "" {
		t.Errorf("round trip: %+v", back)
	}
	open := Record{V: 1, Seq: 1, Time: t0, Kind: KindOpen, Window: "w", Tool: "Edit"}
	b, _ = json.Marshal(&open)
	if strings.Contains(string(b), "hash") {
		t.Errorf("open record carries file fields: %s", b)
	}
}

func TestParseRecordRefusals(t *testing.T) {
	cases := map[string]string{
		`{"v":2,"seq":1,"time":"2026-12-01T09:00:00Z","kind":"open","window":"w","future":1}`:                                                            "unknown record format version 2",
		`{"v":1,"seq":1,"time":"2026-12-01T09:00:00Z","kind":"open","window":"w"} {}`:                                                                    "after top-level value",
		`{"v":1,"seq":1,"time":"2026-12-01T09:00:00Z","kind":"after","window":"w","path":"a","hash":"md5:00","size":0,"mtime":0,"mode":0,"type":"file"}`: "hash",
		`not json`: "invalid character",
	}
	for line, want := range cases {
		_, err := ParseRecord([]byte(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRecord(%s): error %v, want one containing %q", line, err, want)
		}
	}
}
