package rewind_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/rewind"
)

// Reverting windows: newest first, later windows and the user's edits
// kept, conflicts for binary files and for files created or deleted and
// changed since, and a skipped file reported as not restorable.
func TestRevert(t *testing.T) {
	w := newWS(t)
	w.write("a.txt", "1\n2\n3\n4\n5\n6\n7\n")
	w.write("bin", "\x00v1")
	w.write("gone.txt", "keep me\n")
	w.window("w1", func() {
		w.write("a.txt", "1\nTWO\n3\n4\n5\n6\n7\n")
		w.write("bin", "\x00v2")
		w.write("made.txt", "made\n")
		w.remove("gone.txt")
	})
	w.window("w2", func() { w.write("a.txt", "1\nTWO\n3\n4\n5\n6\nSEVEN\n") })
	// Since: the user changes the binary and the created file.
	w.write("bin", "\x00v3")
	w.write("made.txt", "made and changed\n")

	out, err := rewind.Run(w.env(nil), rewind.Request{Revert: []string{"w1"}, Apply: true})
	var re *rewind.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("revert with conflicts: %v", err)
	}
	reasons := map[string]string{}
	for _, c := range out.Plan.Conflicts {
		reasons[c.Path] = c.Reason
	}
	if !strings.Contains(reasons["bin"], "binary") || !strings.Contains(reasons["made.txt"], "created it") || len(reasons) != 2 {
		t.Fatalf("conflicts: %+v", out.Plan.Conflicts)
	}
	if got := string(read(t, w.p("a.txt"))); got != "1\nTWO\n3\n4\n5\n6\nSEVEN\n" {
		t.Fatalf("a refused revert wrote a.txt: %q", got)
	}

	// Without the conflicting paths it goes through: w1's change to a.txt
	// comes out, w2's stays; the deleted file comes back.
	if _, err := rewind.Run(w.env(nil), rewind.Request{Revert: []string{"w1"}, Paths: []string{"a.txt", "gone.txt"}, Apply: true}); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, w.p("a.txt"))); got != "1\n2\n3\n4\n5\n6\nSEVEN\n" {
		t.Fatalf("a.txt after revert: %q", got)
	}
	if got := string(read(t, w.p("gone.txt"))); got != "keep me\n" {
		t.Fatalf("gone.txt after revert: %q", got)
	}

	// Two windows at once, named oldest first: both come out.
	if _, err := rewind.Run(w.env(nil), rewind.Request{Revert: []string{"w1", "w2"}, Paths: []string{"a.txt"}, Apply: true}); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, w.p("a.txt"))); got != "1\n2\n3\n4\n5\n6\n7\n" {
		t.Fatalf("a.txt after reverting both: %q", got)
	}

	for _, bad := range [][]string{{"nosuch"}} {
		if _, err := rewind.Run(w.env(nil), rewind.Request{Revert: bad, Apply: true}); err == nil || !strings.Contains(err.Error(), "ckfs log lists them") {
			t.Errorf("revert %v: %v", bad, err)
		}
	}
	if _, err := rewind.Run(w.env(nil), rewind.Request{Target: 1, Paths: []string{"[bad"}}); err == nil {
		t.Error("a bad path pattern was accepted")
	}
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
