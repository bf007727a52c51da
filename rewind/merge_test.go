package rewind

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestRevertMerge(t *testing.T) {
	before := "a\nb\nc\nd\ne\nf\ng\n"
	window := "a\nB\nc\nd\ne\nf\ng\n" // the window changed b
	for _, tc := range []struct {
		name, now, want string
		conflicts       int
	}{
		{"nothing since", window, before, 0},
		{"an edit elsewhere since", "a\nB\nc\nd\ne\nf\nG\n", "a\nb\nc\nd\ne\nf\nG\n", 0},
		{"lines added since", "a\nB\nc\nd\ne\nf\ng\nh\ni\n", "a\nb\nc\nd\ne\nf\ng\nh\ni\n", 0},
		{"the same line changed again", "a\nBB\nc\nd\ne\nf\ng\n", "", 1},
		{"already reverted", before, before, 0},
		{"no final newline since", "a\nB\nc\nd\ne\nf\ng", "a\nb\nc\nd\ne\nf\ng", 0},
	} {
		got, hunks := revertMerge([]byte(tc.now), []byte(before), []byte(window), false, "window w")
		if len(hunks) != tc.conflicts {
			t.Errorf("%s: %d conflicts, want %d: %+v", tc.name, len(hunks), tc.conflicts, hunks)
			continue
		}
		if tc.conflicts == 0 && string(got) != tc.want {
			t.Errorf("%s: merged %q, want %q", tc.name, got, tc.want)
		}
	}
	got, hunks := revertMerge([]byte("a\nBB\nc\n"), []byte("a\nb\nc\n"), []byte("a\nB\nc\n"), true, "window w")
	want := "a\n<<<<<<< now\nBB\n||||||| after window w\nB\n=======\nb\n>>>>>>> before window w\nc\n"
	if string(got) != want || len(hunks) != 1 || hunks[0].Line != 2 {
		t.Errorf("markers:\n%s\nwant\n%s\nhunks %+v", got, want, hunks)
	}
	if s := hunks[0].String(); !strings.Contains(s, "line 2:") || !strings.Contains(s, "| BB") {
		t.Errorf("hunk text:\n%s", s)
	}
}

// Taking out a change nobody touched since gives back exactly what was
// there before it, whatever the lines are.
func TestRevertMergeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		line := rapid.SampledFrom([]string{"a\n", "b\n", "c\n", "\n", "x", "é\n"})
		before := strings.Join(rapid.SliceOf(line).Draw(t, "before"), "")
		window := strings.Join(rapid.SliceOf(line).Draw(t, "window"), "")
		got, hunks := revertMerge([]byte(window), []byte(before), []byte(window), false, "w")
		if len(hunks) != 0 || string(got) != before {
			t.Fatalf("revert of %q -> %q gave %q (%d conflicts)", before, window, got, len(hunks))
		}
	})
}

func FuzzRevertMerge(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("a\n"), []byte("a\nB\n"))
	f.Fuzz(func(t *testing.T, now, before, window []byte) {
		got, hunks := revertMerge(now, before, window, false, "w")
		if len(hunks) == 0 && string(now) == string(window) && string(got) != string(before) {
			t.Fatalf("clean revert of an untouched change is not the original")
		}
		revertMerge(now, before, window, true, "w")
	})
}
