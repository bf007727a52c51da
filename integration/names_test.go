package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// File names are bytes: a name that is not UTF-8, one with a newline and
// one near NAME_MAX are recorded and rewound byte-exact on a real mount,
// and printed escaped, never raw.
func TestOddNamesOnAMount(t *testing.T) {
	long := strings.Repeat("L", 250)
	w := mountWorkspace(t, `printf 'v0\n' > `+long)
	names := []string{"caf\xe9.txt", "new\nline", long}
	w.window("w1", `printf 'v1\n' > "$(printf 'caf\351.txt')" && printf 'v1\n' > "$(printf 'new\nline')" && printf 'v1\n' > `+long)
	list := func() []string {
		ents, err := os.ReadDir(w.root)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		slices.Sort(out)
		return out
	}
	after := list()
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(after, want) {
		t.Fatalf("names after w1: %q, want %q", after, want)
	}
	log := w.ckfs("log")
	if strings.Contains(log, "new\nline") || !strings.Contains(log, `"new\nline"`) || !strings.Contains(log, `"caf\xe9.txt"`) {
		t.Errorf("log does not escape the names:\n%s", log)
	}
	w.ckfs("rewind", "--files", "--to", "w1")
	if got := list(); !slices.Equal(got, []string{long}) {
		t.Fatalf("names after rewinding w1: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(w.root, long)); string(b) != "v0\n" {
		t.Errorf("the long name holds %q", b)
	}
	w.ckfs("rewind", "--files", "--undo")
	if got := list(); !slices.Equal(got, after) {
		t.Fatalf("names after undo: %q, want %q", got, after)
	}
	for _, n := range names {
		if b, _ := os.ReadFile(filepath.Join(w.root, n)); string(b) != "v1\n" {
			t.Errorf("%q after undo holds %q", n, b)
		}
	}
}
