package provenance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
	"pgregory.net/rapid"
)

// TestBlameProperty plays random histories of one file (windows' edits,
// the user's edits, rewinds to earlier versions, a deletion and a
// re-creation) and checks what blame promises: the lines are the file's,
// in order, each with exactly one origin, and the version that origin
// names held that line.
func TestBlameProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tl := newTimeline()
		var cur *string
		var versions []string
		for i := range rapid.IntRange(1, 12).Draw(rt, "changes") {
			next := edit(rt, cur)
			switch rapid.IntRange(0, 3).Draw(rt, "by") {
			case 0:
				if cur != nil && next != nil {
					tl.outside("f", *cur, *next)
					break
				}
				fallthrough
			case 1, 2:
				tl.window(fmt.Sprintf("w%d", i), "f", cur, next)
			case 3:
				if cur == nil || len(versions) == 0 {
					tl.window(fmt.Sprintf("w%d", i), "f", cur, next)
					break
				}
				back := rapid.SampledFrom(versions).Draw(rt, "back")
				next = &back
				tl.rewind(fmt.Sprintf("r-%d", i), "f", *cur, back, 1)
			}
			cur = next
			if cur != nil {
				versions = append(versions, *cur)
			}
		}
		if cur == nil {
			return
		}
		lines, err := Blame(tl.recs, "f", tl.recs[len(tl.recs)-1].Seq, tl.get, nil)
		if err != nil {
			rt.Fatal(err)
		}
		var text []string
		for _, l := range lines {
			text = append(text, l.Text)
		}
		if got, want := text, splitLines(*cur); !slices.Equal(got, want) {
			rt.Fatalf("blame's lines %q; the file's %q", got, want)
		}
		bySeq := map[uint64]index.Record{}
		for _, r := range tl.recs {
			bySeq[r.Seq] = r
		}
		for i, l := range lines {
			r, ok := bySeq[l.Origin.Seq]
			if !ok || !r.IsImage() {
				rt.Fatalf("line %d %q: its origin names seq %d, not an image", i+1, l.Text, l.Origin.Seq)
			}
			if held := splitLines(string(tl.content[r.State.Hash])); !slices.Contains(held, l.Text) {
				rt.Fatalf("line %d %q: its origin, seq %d, held %q", i+1, l.Text, l.Origin.Seq, held)
			}
		}
	})
}

// edit changes a file's content at random: lines inserted, deleted,
// replaced or moved; sometimes the file is deleted or created.
func edit(rt *rapid.T, cur *string) *string {
	if cur == nil {
		s := strings.Join(rapid.SliceOfN(rapid.SampledFrom(words), 1, 6).Draw(rt, "new"), "")
		return &s
	}
	if rapid.IntRange(0, 9).Draw(rt, "delete") == 0 {
		return nil
	}
	lines := strings.SplitAfter(*cur, "\n")
	for range rapid.IntRange(1, 3).Draw(rt, "edits") {
		i := rapid.IntRange(0, len(lines)).Draw(rt, "at")
		switch rapid.IntRange(0, 3).Draw(rt, "op") {
		case 0:
			lines = slices.Insert(lines, i, rapid.SampledFrom(words).Draw(rt, "line"))
		case 1:
			if i < len(lines) {
				lines = slices.Delete(lines, i, i+1)
			}
		case 2:
			if i < len(lines) {
				lines[i] = rapid.SampledFrom(words).Draw(rt, "line")
			}
		case 3:
			if i < len(lines) {
				l := lines[i]
				lines = slices.Delete(lines, i, i+1)
				lines = append(lines, l)
			}
		}
	}
	s := strings.Join(lines, "")
	return &s
}

var words = []string{"alpha\n", "beta\n", "gamma\n", "}\n", "\n", "return nil\n", "delta"}
