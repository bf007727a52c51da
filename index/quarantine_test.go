package index

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every kind of bad line is moved to quarantine verbatim, the good records
// around them stay in order, and the timeline loads and opens for writing
// again.
func TestQuarantineBadLines(t *testing.T) {
	dir := t.TempDir()
	w, _, err := OpenWriter(dir, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"w1", "w2", "w3"} {
		if err := w.Append(&Record{Kind: KindOpen, Window: id}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := filepath.Join(dir, TimelineFile)
	good, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(good), "\n")
	garbage := "this is not json\n"
	dup := strings.Replace(lines[1], `"seq":2`, `"seq":1`, 1)
	huge := `{"v":1,"junk":"` + strings.Repeat("x", 2<<20) + "\"}\n"
	torn := `{"v":1,"seq":9,"time":"` + strings.Repeat("y", 1<<20+10) // no newline, over 1 MiB
	bad := lines[0] + garbage + lines[1] + dup + huge + lines[2] + torn
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, tail, _ := Load(path); tail == nil {
		t.Fatal("the planted timeline loads cleanly: the test plants nothing")
	}
	q, err := QuarantineBadLines(dir, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Lines) != 4 || q.Kept != 3 {
		t.Fatalf("quarantined %+v", q)
	}
	recs, tail, err := Load(path)
	if err != nil || tail != nil || len(recs) != 3 || recs[2].Window != "w3" {
		t.Fatalf("after quarantine: %d records, %v %v", len(recs), tail, err)
	}
	moved, _ := os.ReadFile(q.File)
	if want := garbage + dup + huge + torn + "\n"; !bytes.Equal(moved, []byte(want)) {
		t.Errorf("quarantine file holds %d bytes, want the %d bad bytes verbatim", len(moved), len(want))
	}
	if rep, err := os.ReadFile(q.Report); err != nil || !strings.Contains(string(rep), `"line": 2`) {
		t.Errorf("report: %s %v", rep, err)
	}
	w, rep, err := OpenWriter(dir, WriterOptions{})
	if err != nil || rep != nil {
		t.Fatalf("open after quarantine: %v %v", rep, err)
	}
	defer w.Close()
	if err := w.Append(&Record{Kind: KindClose, Window: "w3"}); err != nil {
		t.Fatal(err)
	}
	// A clean timeline is left alone.
	if _, err := QuarantineBadLines(dir, time.Unix(1, 0)); err == nil {
		t.Error("quarantine ran while the writer holds the lock")
	}
}

func TestQuarantineCleanTimelineChangesNothing(t *testing.T) {
	dir := t.TempDir()
	w, _, _ := OpenWriter(dir, WriterOptions{})
	w.Append(&Record{Kind: KindOpen, Window: "w1"})
	w.Close()
	before, _ := os.ReadFile(filepath.Join(dir, TimelineFile))
	q, err := QuarantineBadLines(dir, time.Now())
	if err != nil || len(q.Lines) != 0 || q.File != "" {
		t.Fatalf("%+v %v", q, err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, TimelineFile))
	if !bytes.Equal(before, after) {
		t.Error("a clean timeline was rewritten")
	}
	if _, err := os.Stat(filepath.Join(dir, QuarantineDir)); !os.IsNotExist(err) {
		t.Error("quarantine/ created for a clean timeline")
	}
}

// One record whose seq gained a digit goes to quarantine alone: the ten
// good records after it stay (keeping the first increasing lines dropped
// them all, and two windows vanished from ckfs log).
func TestQuarantineKeepsTheLongestRun(t *testing.T) {
	dir := t.TempDir()
	w, _, err := OpenWriter(dir, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 14 {
		if err := w.Append(&Record{Kind: KindOpen, Window: fmt.Sprintf("w%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := filepath.Join(dir, TimelineFile)
	good, _ := os.ReadFile(path)
	flipped := strings.Replace(string(good), `"seq":4,`, `"seq":94,`, 1)
	if err := os.WriteFile(path, []byte(flipped), 0o600); err != nil {
		t.Fatal(err)
	}
	q, err := QuarantineBadLines(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Lines) != 1 || q.Lines[0].Line != 4 || q.Kept != 13 {
		t.Fatalf("quarantined %+v, kept %d: want only line 4 out, 13 kept", q.Lines, q.Kept)
	}
	recs, tail, err := Load(path)
	if err != nil || tail != nil || len(recs) != 13 || recs[12].Window != "w13" {
		t.Fatalf("after repair: %d records, tail %v, err %v", len(recs), tail, err)
	}
}
