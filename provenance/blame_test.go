package provenance

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

// timeline builds records as capture writes them, with content kept in a
// map the blamer reads through.
type timeline struct {
	recs    []index.Record
	content map[index.Hash][]byte
}

func newTimeline() *timeline { return &timeline{content: map[index.Hash][]byte{}} }

func (tl *timeline) add(r index.Record) uint64 {
	r.Seq = uint64(len(tl.recs) + 1)
	r.Time = time.Unix(1800000000+int64(r.Seq), 0)
	tl.recs = append(tl.recs, r)
	return r.Seq
}

func (tl *timeline) state(content *string) *index.State {
	if content == nil {
		return &index.State{Type: index.TypeAbsent}
	}
	h := index.Hash(fmt.Sprintf("blake3:%064x", len(tl.content)+1))
	for k, v := range tl.content {
		if string(v) == *content {
			h = k
		}
	}
	tl.content[h] = []byte(*content)
	return &index.State{Type: index.TypeFile, Hash: h, Size: int64(len(*content)), Mode: 0o644}
}

func str(s string) *string { return &s }

// window records a tool call that changed path from before to after (nil:
// absent).
func (tl *timeline) window(id, path string, before, after *string) uint64 {
	open := tl.add(index.Record{Kind: index.KindOpen, Window: id, Tool: "Bash"})
	tl.add(index.Record{Kind: index.KindBefore, Window: id, Path: path, State: tl.state(before)})
	tl.add(index.Record{Kind: index.KindAfter, Window: id, Path: path, State: tl.state(after)})
	tl.add(index.Record{Kind: index.KindClose, Window: id})
	return open
}

// outside records the user's own change, made while no window was open.
func (tl *timeline) outside(path string, before, after string) {
	tl.add(index.Record{Kind: index.KindOutside, Image: index.ImageBefore, Path: path, State: tl.state(&before)})
	tl.add(index.Record{Kind: index.KindOutside, Image: index.ImageAfter, Path: path, State: tl.state(&after)})
}

// rewind records a rewind operation that changed path to after.
func (tl *timeline) rewind(op, path string, before, after string, target uint64) {
	tl.add(index.Record{Kind: index.KindBefore, Window: op, Path: path, State: tl.state(&before)})
	tl.add(index.Record{Kind: index.KindRewind, Op: op, Target: &target})
	tl.add(index.Record{Kind: index.KindAfter, Window: op, Path: path, State: tl.state(&after)})
}

func (tl *timeline) get(s index.State) ([]byte, error) {
	b, ok := tl.content[s.Hash]
	if !ok {
		return nil, errors.New("no such object")
	}
	return b, nil
}

func (tl *timeline) blame(t *testing.T, path string, now *Now) []Line {
	t.Helper()
	lines, err := Blame(tl.recs, path, tl.recs[len(tl.recs)-1].Seq, tl.get, now)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// who renders each line as "text<-origin", the origin a window id, "you",
// "before", or "rewind"; a restored line adds "(op)".
func who(lines []Line) string {
	var out []string
	for _, l := range lines {
		o := l.Origin.Window
		if l.Origin.By != ByWindow {
			o = l.Origin.By
			if l.Origin.By == ByRewind {
				o += ":" + l.Origin.Window
			}
		}
		if l.Origin.Restored != "" {
			o += "(" + l.Origin.Restored + ")"
		}
		out = append(out, l.Text+"<-"+o)
	}
	return strings.Join(out, " ")
}

func TestBlameEachLineToTheWindowThatLastWroteIt(t *testing.T) {
	tl := newTimeline()
	tl.window("w1", "f", nil, str("a\nb\nc\n"))
	tl.window("w2", "f", str("a\nb\nc\n"), str("a\nB\nc\nd\n"))
	tl.window("w3", "f", str("a\nB\nc\nd\n"), str("a\nB\nc\nd\ne"))
	if got, want := who(tl.blame(t, "f", nil)), "a<-w1 B<-w2 c<-w1 d<-w2 e<-w3"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestBlameCreditsTheUserAndWhatWasThereBefore(t *testing.T) {
	tl := newTimeline()
	// The file existed before ckfs: its first record is w1's pre-image.
	tl.window("w1", "f", str("old\nkept\n"), str("old\nkept\nagent\n"))
	tl.outside("f", "old\nkept\nagent\n", "mine\nkept\nagent\n")
	// A change nobody saw (made while nothing was mounted) shows as the
	// difference between the last record and w2's pre-image.
	tl.window("w2", "f", str("mine\nkept\nagent\nunseen\n"), str("mine\nkept\nagent\nunseen\nw2\n"))
	got := who(tl.blame(t, "f", &Now{Data: []byte("mine\nkept\nagent\nunseen\nw2\nediting\n")}))
	if want := "mine<-you kept<-before agent<-w1 unseen<-you w2<-w2 editing<-you"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	lines := tl.blame(t, "f", &Now{Data: []byte("mine\nkept\nagent\nunseen\nw2\nediting\n")})
	if o := lines[5].Origin; o.Seq != 0 {
		t.Errorf("a line on disk and not recorded yet has seq %d; want 0", o.Seq)
	}
}

func TestBlameGivesARewoundLineToTheWindowThatFirstWroteIt(t *testing.T) {
	tl := newTimeline()
	tl.window("w1", "f", nil, str("a\nb\n"))
	w2 := tl.window("w2", "f", str("a\nb\n"), str("a\nX\n"))
	tl.window("w3", "f", str("a\nX\n"), str("a\nX\nY\n"))
	tl.rewind("r-1", "f", "a\nX\nY\n", "a\nb\n", w2)
	if got, want := who(tl.blame(t, "f", nil)), "a<-w1 b<-w1(r-1)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A revert of w2 alone merges: w3's line stays, w1's comes back.
	tl.rewind("r-2", "f", "a\nb\n", "a\nX\nY\n", w2) // undo the rewind
	tl.rewind("r-3", "f", "a\nX\nY\n", "a\nb\nY\n", w2)
	if got, want := who(tl.blame(t, "f", nil)), "a<-w1 b<-w1(r-3) Y<-w3(r-2)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestBlameFollowsARenameTheWindowRecorded(t *testing.T) {
	tl := newTimeline()
	tl.window("w1", "old.go", nil, str("package a\nfunc A() {}\nfunc B() {}\n"))
	tl.add(index.Record{Kind: index.KindOpen, Window: "w2", Tool: "Bash"})
	tl.add(index.Record{Kind: index.KindBefore, Window: "w2", Path: "old.go", State: tl.state(str("package a\nfunc A() {}\nfunc B() {}\n"))})
	tl.add(index.Record{Kind: index.KindBefore, Window: "w2", Path: "new.go", State: tl.state(nil)})
	tl.add(index.Record{Kind: index.KindAfter, Window: "w2", Path: "new.go", State: tl.state(str("package a\nfunc A() {}\nfunc C() {}\n"))})
	tl.add(index.Record{Kind: index.KindAfter, Window: "w2", Path: "old.go", State: tl.state(nil)})
	tl.add(index.Record{Kind: index.KindClose, Window: "w2"})
	lines := tl.blame(t, "new.go", nil)
	if got, want := who(lines), "package a<-w1 func A() {}<-w1 func C() {}<-w2"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if lines[0].Origin.Path != "old.go" || lines[2].Origin.Path != "new.go" {
		t.Errorf("origins' paths: %q, %q; want old.go, new.go", lines[0].Origin.Path, lines[2].Origin.Path)
	}
}

func TestBlameKeepsAMovedBlocksOrigin(t *testing.T) {
	tl := newTimeline()
	tl.window("w1", "f", nil, str("func one() {\n}\nfunc two() {\n}\n"))
	tl.window("w2", "f", str("func one() {\n}\nfunc two() {\n}\n"), str("func two() {\n}\nfunc one() {\n}\n// w2\n"))
	got := who(tl.blame(t, "f", nil))
	if !strings.Contains(got, "func one() {<-w1") || !strings.Contains(got, "func two() {<-w1") || !strings.Contains(got, "// w2<-w2") {
		t.Errorf("a moved function lost its origin: %s", got)
	}
}

func TestBlameRefusesWhatItCannotShow(t *testing.T) {
	tl := newTimeline()
	tl.window("w1", "bin", nil, str("\x00\x01binary"))
	tl.window("w2", "gone", str("x\n"), nil)
	at := tl.recs[len(tl.recs)-1].Seq
	if _, err := Blame(tl.recs, "bin", at, tl.get, nil); !errors.Is(err, ErrBinary) {
		t.Errorf("blame of a binary file: %v; want ErrBinary", err)
	}
	if _, err := Blame(tl.recs, "gone", at, tl.get, nil); !errors.Is(err, ErrNoFile) {
		t.Errorf("blame of a deleted file: %v; want ErrNoFile", err)
	}
	if _, err := Blame(tl.recs, "never", at, tl.get, nil); !errors.Is(err, ErrNoHistory) {
		t.Errorf("blame of a path never recorded: %v; want ErrNoHistory", err)
	}
	// At a checkpoint before w2, the deleted file is there, as it was
	// before ckfs.
	lines, err := Blame(tl.recs, "gone", 1, tl.get, nil)
	if err != nil || who(lines) != "x<-before" {
		t.Errorf("blame of gone at checkpoint 1: %s, %v; want x<-before", who(lines), err)
	}
}
