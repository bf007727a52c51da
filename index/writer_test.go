package index

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeClock is an injected clock that advances one second per call.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { c.t = c.t.Add(time.Second); return c.t }

func openTest(t *testing.T, dir string) (*Writer, *Repair) {
	t.Helper()
	c := &fakeClock{t: t0}
	w, rep, err := OpenWriter(dir, WriterOptions{Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, rep
}

func TestWriterAssignsSeqAndTime(t *testing.T) {
	dir := t.TempDir()
	w, rep := openTest(t, dir)
	if rep != nil {
		t.Fatalf("repair on a new timeline: %v", rep)
	}
	recs := []*Record{
		{Kind: KindOpen, Window: "w1"},
		{Kind: KindBefore, Window: "w1", Path: "a", State: fileState(h1)},
		{Kind: KindClose, Window: "w1"},
	}
	if err := w.Append(recs[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs[1:]...); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Seq != uint64(i+1) || r.V != Version {
			t.Errorf("record %d: seq %d v %d", i, r.Seq, r.V)
		}
	}
	if !recs[0].Time.Equal(t0.Add(time.Second)) || !recs[2].Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("times do not come from the injected clock: %v %v", recs[0].Time, recs[2].Time)
	}
	// An invalid record is refused and consumes no seq.
	if err := w.Append(&Record{Kind: KindBefore, Window: "w", Path: "../x", State: fileState(h1)}); err == nil {
		t.Fatal("invalid record appended")
	}
	w.Close()

	w2, _ := openTest(t, dir)
	if w2.LastSeq() != 3 {
		t.Errorf("reopened writer at seq %d, want 3", w2.LastSeq())
	}
	r := &Record{Kind: KindOpen, Window: "w2"}
	if err := w2.Append(r); err != nil || r.Seq != 4 {
		t.Errorf("append after reopen: seq %d, %v", r.Seq, err)
	}
	got, tail, err := Load(filepath.Join(dir, TimelineFile))
	if err != nil || tail != nil || len(got) != 4 {
		t.Fatalf("Load: %d records, tail %v, err %v", len(got), tail, err)
	}
}

func TestWriterLock(t *testing.T) {
	dir := t.TempDir()
	w, _ := openTest(t, dir)
	if _, _, err := OpenWriter(dir, WriterOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: %v, want ErrLocked", err)
	}
	w.Close()
	w2, _, err := OpenWriter(dir, WriterOptions{})
	if err != nil {
		t.Fatalf("writer after close: %v", err)
	}
	w2.Close()
}

func TestWriterRepairsTornTail(t *testing.T) {
	dir := t.TempDir()
	w, _ := openTest(t, dir)
	for i := 0; i < 3; i++ {
		if err := w.Append(&Record{Kind: KindOpen, Window: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := filepath.Join(dir, TimelineFile)
	good, _ := os.ReadFile(path)
	for _, tear := range []string{`{"v":1,"seq":4,"ti`, "\x00\x00\x00\x00"} {
		os.WriteFile(path, append(bytes.Clone(good), tear...), 0o600)
		recs, tail, err := Load(path)
		if err != nil || len(recs) != 3 || tail == nil || !tail.Torn || tail.Line != 4 {
			t.Fatalf("Load of torn file: %d records, tail %v, err %v", len(recs), tail, err)
		}
		w, rep := openTest(t, dir)
		if rep == nil || rep.Offset != int64(len(good)) || rep.TornBytes != int64(len(tear)) {
			t.Fatalf("repair %v, want offset %d torn %d", rep, len(good), len(tear))
		}
		if !strings.Contains(rep.String(), "torn") {
			t.Errorf("repair report %q", rep)
		}
		if w.LastSeq() != 3 {
			t.Errorf("seq after repair %d", w.LastSeq())
		}
		w.Close()
		after, _ := os.ReadFile(path)
		if !bytes.Equal(after, good) {
			t.Fatalf("repair did not restore the good prefix")
		}
	}
}

func TestWriterRefusesCorruptLastRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, TimelineFile)
	os.WriteFile(path, []byte("{\"v\":1,\"seq\":1}\n"), 0o600)
	if _, _, err := OpenWriter(dir, WriterOptions{}); err == nil || !strings.Contains(err.Error(), "ckfs verify") {
		t.Fatalf("open over a corrupt last record: %v", err)
	}
}

func TestScanStopsAtFirstBadLine(t *testing.T) {
	lines := []string{
		`{"v":1,"seq":1,"time":"2026-12-01T09:00:00Z","kind":"open","window":"w"}`,
		`{"v":1,"seq":2,"time":"2026-12-01T09:00:00Z","kind":"close","window":"w"}`,
		`{"v":1,"seq":2,"time":"2026-12-01T09:00:00Z","kind":"open","window":"w2"}`,
		`{"v":1,"seq":4,"time":"2026-12-01T09:00:00Z","kind":"close","window":"w2"}`,
	}
	var n int
	err := Scan(strings.NewReader(strings.Join(lines, "\n")+"\n"), func(*Record) error { n++; return nil })
	le, ok := errors.AsType[*LineError](err)
	if !ok || le.Line != 3 || le.Torn || n != 2 || !strings.Contains(le.Error(), "line 3") {
		t.Fatalf("Scan: %d records, error %v", n, err)
	}
	bad := strings.Replace(lines[1], `"close"`, `"after","path":"../../etc/passwd","hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"`, 1)
	n = 0
	err = Scan(strings.NewReader(lines[0]+"\n"+bad+"\n"), func(*Record) error { n++; return nil })
	if le, ok := errors.AsType[*LineError](err); !ok || le.Line != 2 || n != 1 {
		t.Fatalf("hostile path: %d records, %v", n, err)
	}
}

// LastSeq reads the last complete record from the tail alone, ignoring a
// torn line after it.
func TestLastSeqReadsTheTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, TimelineFile)
	if n, err := LastSeq(path); n != 0 || err != nil {
		t.Fatalf("missing timeline: %d, %v", n, err)
	}
	w, _, err := OpenWriter(dir, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Append(&Record{Kind: KindOpen, Window: "w" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"seq":4,"ti`)
	f.Close()
	if n, err := LastSeq(path); n != 3 || err != nil {
		t.Fatalf("LastSeq = %d, %v; want 3", n, err)
	}
}
