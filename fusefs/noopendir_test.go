package fusefs_test

import (
	"os"
	"slices"
	"testing"

	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/internal/testenv"
)

// requests mounts with go-fuse's request log on and returns the mount and
// the log.
func requests(t *testing.T, inPlace bool) (*mounted, *testenv.RequestLog) {
	reqs := testenv.CaptureRequestLog(t)
	return mountWith(t, fusefs.Options{InPlace: inPlace, Debug: true}), reqs
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range es {
		n = append(n, e.Name())
	}
	return n
}

// Mounted in place, listing a directory sends no OPENDIR or RELEASEDIR
// (after the first OPENDIR, answered ENOSYS), and the listings the kernel
// caches still follow every change made through the mount.
func TestInPlaceListsWithoutOpendir(t *testing.T) {
	m, reqs := requests(t, true)
	if err := os.Mkdir(m.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(m.path("d/"+n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if got := names(t, m.path("d")); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("listing %v, want [a b]", got)
		}
	}
	os.WriteFile(m.path("d/c"), nil, 0o644)
	os.Remove(m.path("d/a"))
	if err := os.Rename(m.path("d/b"), m.path("d/e")); err != nil {
		t.Fatal(err)
	}
	if got := names(t, m.path("d")); !slices.Equal(got, []string{"c", "e"}) {
		t.Errorf("listing after changes %v, want [c e]", got)
	}
	if err := os.Mkdir(m.path("d/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := names(t, m.path("d/sub")); len(got) != 0 {
		t.Errorf("new directory lists %v", got)
	}
	// A directory's fsync still reaches the backing directory.
	f, err := os.Open(m.path("d"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Errorf("fsync of a directory: %v", err)
	}
	f.Close()
	if n := reqs.Count("OPENDIR"); n > 1 {
		t.Errorf("%d OPENDIR requests, want at most the first", n)
	}
	if n := reqs.Count("RELEASEDIR"); n != 0 {
		t.Errorf("%d RELEASEDIR requests, want none", n)
	}
}

// Mounted elsewhere, changes behind the mount must show, so directories
// are opened (and their listings read) every time.
func TestElsewhereOpensDirectories(t *testing.T) {
	m, reqs := requests(t, false)
	for range 3 {
		names(t, m.mnt)
	}
	if err := os.WriteFile(m.backing+"/behind", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := names(t, m.mnt); !slices.Equal(got, []string{"behind"}) {
		t.Errorf("listing %v, want the file made behind the mount", got)
	}
	if n := reqs.Count("OPENDIR"); n < 4 {
		t.Errorf("%d OPENDIR requests for 4 listings", n)
	}
}
