package remote

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

func sampleHead() *Head {
	return &Head{
		Version: HeadVersion, Workspace: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Root: "/src/repo", Host: "sandbox-1",
		Created: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Updated: time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC),
		Timeline: []Segment{
			{Object: cas.Sum([]byte("a")), Bytes: 700, FirstSeq: 1, LastSeq: 4},
			{Object: cas.Sum([]byte("b")), Bytes: 300, FirstSeq: 5, LastSeq: 6},
		},
		TimelineBytes: 1000, LastSeq: 6,
		Baseline: &Baseline{Object: cas.Sum([]byte("c")), Paths: 3, Taken: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)},
		Files:    map[string]cas.Hash{"marks.jsonl": cas.Sum([]byte("m")), "sessions/s1.jsonl": cas.Sum([]byte("s"))},
	}
}

func TestHeadRoundTripAndRefusals(t *testing.T) {
	data, _ := json.Marshal(sampleHead())
	h, err := ParseHead(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(h)
	if string(again) != string(data) {
		t.Fatalf("round trip changed the head:\n%s\n%s", data, again)
	}
	for name, mutate := range map[string]func(*Head){
		"a gap between segments":  func(h *Head) { h.Timeline[1].FirstSeq = 4 },
		"bytes that do not add":   func(h *Head) { h.TimelineBytes = 999 },
		"a newer version":         func(h *Head) { h.Version = 2 },
		"a path as workspace id":  func(h *Head) { h.Workspace = "../x" },
		"a log outside the store": func(h *Head) { h.Files["../../etc/passwd"] = cas.Sum(nil) },
	} {
		h := sampleHead()
		mutate(h)
		data, _ := json.Marshal(h)
		if _, err := ParseHead(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	unknown := strings.Replace(string(data), `"version":1`, `"version":1,"extra":true`, 1)
	if _, err := ParseHead([]byte(unknown)); err == nil {
		t.Error("an unknown field: accepted")
	}
}

func FuzzParseHead(f *testing.F) {
	data, _ := json.Marshal(sampleHead())
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHead(data)
		if err != nil {
			return
		}
		// Whatever is accepted survives a round trip and stays valid.
		again, _ := json.Marshal(h)
		if _, err := ParseHead(again); err != nil {
			t.Fatalf("an accepted head does not parse again: %v", err)
		}
	})
}

func sampleBaseline() []byte {
	return encodeBaseline([]BaselineEntry{
		{Path: "README.md", State: index.State{Type: index.TypeSymlink, Hash: cas.Sum([]byte("docs/x")), Size: 6, Mode: 0o777}},
		{Path: "big.bin", State: index.State{Type: index.TypeFile, Size: 1 << 30, Mode: 0o644}, Skip: "larger than the capture limit"},
		{Path: "src", State: index.State{Type: index.TypeDir, Mode: 0o755}},
		{Path: "src/a.go", State: index.State{Type: index.TypeFile, Hash: cas.Sum([]byte("package a\n")), Size: 10, Mode: 0o644}},
	})
}

func TestBaselineRefusals(t *testing.T) {
	if es, err := ParseBaseline(sampleBaseline()); err != nil || len(es) != 4 {
		t.Fatalf("ParseBaseline = %d entries, %v", len(es), err)
	}
	for name, data := range map[string]string{
		"a path with ..":        `{"path":"../x","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir"}` + "\n",
		"a path twice":          `{"path":"d","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir"}` + "\n" + `{"path":"d","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir"}` + "\n",
		"an absent path":        `{"path":"x","hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}` + "\n",
		"a file without hash":   `{"path":"x","hash":null,"size":3,"mtime":0,"mode":420,"type":"file"}` + "\n",
		"an unknown field":      `{"path":"d","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir","x":1}` + "\n",
		"a torn last line":      `{"path":"d","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir"}`,
		"two objects on a line": `{"path":"d","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir"}{}` + "\n",
	} {
		if _, err := ParseBaseline([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseBaseline(f *testing.F) {
	f.Add(sampleBaseline())
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ParseBaseline(data)
		if err != nil {
			return
		}
		// Accepted entries name valid paths, and survive a round trip.
		for _, e := range es {
			p, err := index.DecodePath(e.Path)
			if err != nil || index.ValidatePath(p) != nil {
				t.Fatalf("accepted a bad path %q", e.Path)
			}
		}
		if _, err := ParseBaseline(encodeBaseline(es)); err != nil {
			t.Fatalf("an accepted manifest does not parse again: %v", err)
		}
	})
}

func TestParseURL(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b":           "b|",
		"s3://b/":          "b|",
		"s3://b/p/q":       "b|p/q/",
		"s3://b//p/../q/":  "b|q/",
		"http://b/p":       "error",
		"s3:///p":          "error",
		"s3://b/p?x=1":     "error",
		"agents/ckfs/prod": "error",
	} {
		bkt, pre, err := ParseURL(in)
		got := bkt + "|" + pre
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("ParseURL(%q) = %s, want %s", in, got, want)
		}
	}
}

// The head shown in docs/format.md parses (with real addresses where it
// elides them).
func TestFormatDocHead(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "**`head.json`**")
	start := strings.Index(s[i:], "```json\n")
	if i < 0 || start < 0 {
		t.Fatal("the head example is gone from docs/format.md")
	}
	body := s[i+start+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	body = strings.ReplaceAll(body, "blake3:…", cas.Sum(nil).String())
	if _, err := ParseHead([]byte(body)); err != nil {
		t.Fatalf("docs/format.md's head does not parse: %v", err)
	}
}
