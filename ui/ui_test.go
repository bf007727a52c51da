package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
)

// The log words every kind of entry and file change, indents a turn's
// windows under its mark, and says where restorability ends.
func TestLog(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	target := uint64(3)
	records := []index.Record{{Seq: 9, Kind: index.KindWatermark, Target: &target, Time: at, Reason: "keep 1"}}
	entries := []workspace.LogEntry{
		{Kind: "mark", Mark: 2, Checkpoint: 8, Label: "fix\nthe build", Session: "s1", Time: at, Restorable: true},
		{Kind: "window", Mark: 2, ID: "toolu_1", Tool: "Bash", Before: 5, Checkpoint: 7, Time: at, Restorable: true, Unfinished: true,
			Files: []workspace.LogFile{{Path: "a.go", Status: "modified", Added: 2, Removed: 1}, {Path: "big.bin", Status: "skipped", Reason: "over the size limit"},
				{Path: "full.bin", Status: "skipped", Reason: "not stored: the store's disk is full"}}},
		{Kind: "outside", Before: 3, Checkpoint: 4, Time: at, Restorable: true, Files: []workspace.LogFile{{Path: "img.png", Status: "added", Binary: true}}},
		{Kind: "rewind", ID: "op1", Target: 1, Before: 2, Time: at, Files: []workspace.LogFile{{Path: "old.go", Status: "deleted", Collected: true}}},
	}
	var b bytes.Buffer
	Log(&b, entries, records)
	got := b.String()
	for _, want := range []string{
		"mark 2  ", "checkpoint 8  conversation s1\n    \"fix the build\"",
		"  window toolu_1  Bash  ", "checkpoints 5..7 (unfinished: ",
		"      M a.go  +2 -1\n", "      ! big.bin  not stored: over the size limit\n",
		"      ! full.bin  not stored: the store's disk is full\n",
		"outside any window (your own edits)", "    A img.png  binary\n",
		"--- checkpoints before 3 are no longer restorable: ckfs gc removed their content on ",
		"rewind op1  rewind to checkpoint 1", "    D old.go  content collected\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "no longer restorable") < strings.Index(got, "outside any window") {
		t.Errorf("the watermark line comes before a restorable entry:\n%s", got)
	}
	b.Reset()
	Log(&b, nil, nil)
	if !strings.HasPrefix(b.String(), "no checkpoints yet") {
		t.Errorf("empty log: %q", b.String())
	}
}

// A file diff names a change of type in words, summarises binary content,
// and says when a side's content was not stored.
func TestFileDiff(t *testing.T) {
	color.NoColor = true
	file := index.State{Type: index.TypeFile}
	for _, c := range []struct {
		d    workspace.FileDiff
		want string
	}{
		{workspace.FileDiff{Path: "a.go", From: file, To: file, FromData: []byte("x\n"), ToData: []byte("y\n")}, "-x\n+y\n"},
		{workspace.FileDiff{Path: "d", From: file, To: index.State{Type: index.TypeDir}}, "d: file at 3, dir at 9\n"},
		{workspace.FileDiff{Path: "l", From: file, To: index.State{Type: index.TypeSymlink}, FromData: []byte("x"), ToData: []byte("t")}, "l: file at 3, symlink at 9\n"},
		{workspace.FileDiff{Path: "b", From: file, To: file, FromData: []byte{0, 1}, ToData: []byte{0, 2, 3}}, "Binary file b differs (2 -> 3 bytes)\n"},
		{workspace.FileDiff{Path: "u", From: file, Unknown: "over the size limit"}, "u: content not stored (over the size limit)\n"},
		{workspace.FileDiff{Path: "u", From: file, Disk: true, Unknown: "over the size limit"}, "u: content at 3 not stored (over the size limit)\n"},
		{workspace.FileDiff{Path: "u", From: file, Unknown: "not stored: the store's disk is full"}, "u: content not stored (the store's disk is full)\n"},
	} {
		var b bytes.Buffer
		FileDiff(&b, c.d, "3", "9")
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: got\n%s\nwant it to contain %q", c.d.Path, b.String(), c.want)
		}
	}
}

// --oneline: an entry a line, a mark with its prompt (none without one), a
// failed window marked.
func TestLogOneline(t *testing.T) {
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	entries := []workspace.LogEntry{
		{Kind: "mark", Mark: 2, Checkpoint: 8, Label: "fix the build", Time: at, Restorable: true},
		{Kind: "mark", Mark: 1, Checkpoint: 1, Time: at, Restorable: true},
		{Kind: "window", ID: "w1", Tool: "Bash", Before: 5, Checkpoint: 7, Time: at, Restorable: true, Failed: true, Label: "make",
			Files: []workspace.LogFile{{Path: "a.go", Status: "modified", Added: 2, Removed: 1}}},
	}
	var b bytes.Buffer
	LogStyled(&b, entries, nil, LogStyle{Oneline: true})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], `checkpoint 8  "fix the build"`) || !strings.HasSuffix(lines[1], "checkpoint 1") ||
		!strings.HasSuffix(lines[2], `5..7  1 file +2 -1  (failed)  "make"`) {
		t.Errorf("oneline log:\n%s", b.String())
	}
}

// Status names the open windows in words: none, or their ids, not a Go
// slice ("[]").
func TestStatusOpenWindows(t *testing.T) {
	for _, c := range []struct {
		open []string
		want string
	}{
		{nil, "windows    open now: none; 3 opened since this daemon started\n"},
		{[]string{"toolu_1", "toolu_2"}, "windows    open now: toolu_1, toolu_2; 3 opened since this daemon started\n"},
	} {
		var buf bytes.Buffer
		Status(&buf, &workspace.StatusReport{Root: "/r", State: "mounted", Daemon: &workspace.StatusInfo{PID: 7, OpenWindows: c.open, Windows: 3}})
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("status with open windows %v:\n%s\nwant the line %q", c.open, buf.String(), c.want)
		}
	}
}

// The store line says how much of the store's size is its reserve, and
// du counts one object and one version in the singular.
func TestStoreSizesWorded(t *testing.T) {
	var buf bytes.Buffer
	Status(&buf, &workspace.StatusReport{Root: "/r", Store: "/s", State: "not-mounted", Objects: 5, StoreBytes: 1126 << 10, ReserveBytes: 1 << 20})
	if want := "store      /s (5 objects; 1.1MiB on disk, 1MiB of it held free for a full disk)\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("status:\n%s\nwant the line %q", buf.String(), want)
	}
	buf.Reset()
	DU(&buf, &gc.Usage{Store: "/s", Objects: 1,
		Windows: []gc.WindowUsage{{ID: "(outside windows)", Objects: 1, StoredBytes: 67}},
		Files:   []gc.FileUsage{{Path: "a.go", Versions: 1, StoredBytes: 67}}})
	for _, want := range []string{"1 object   (outside windows)\n", "1 version   a.go\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("du:\n%s\nwant %q", buf.String(), want)
		}
	}
}

// A rewind that was tried and failed is not worded as a preview: its
// error, printed after, says what happened and what to do.
func TestOutcomeOfAFailedRewind(t *testing.T) {
	step := rewind.Step{Path: "keep.bin", Actions: []rewind.Action{rewind.ActRestore}}
	text := OutcomeText{Verb: "rewind the files to", Done: "rewound the files to", What: "checkpoint 18", Apply: "Add --files to rewind the files"}
	for _, c := range []struct {
		name    string
		o       rewind.Outcome
		want    string
		notWant string
	}{
		{"preview", rewind.Outcome{}, "would rewind the files to checkpoint 18", "could not"},
		{"failed", rewind.Outcome{Op: "r-1"}, "could not rewind the files to checkpoint 18", "preview only"},
		{"done", rewind.Outcome{Op: "r-1", Applied: true}, "done (operation r-1)", "preview only"},
	} {
		c.o.Plan, c.o.Report = &rewind.Plan{Steps: []rewind.Step{step}}, &rewind.Report{}
		var b bytes.Buffer
		Outcome(&b, &c.o, text, nil, false, false, 0)
		if got := b.String(); !strings.Contains(got, c.want) || strings.Contains(got, c.notWant) {
			t.Errorf("%s: want %q and no %q:\n%s", c.name, c.want, c.notWant, got)
		}
	}
}
