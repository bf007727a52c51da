package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// The baseline reaches a file whose path inside the workspace is as long
// as the kernel allows (4,095 bytes), which the workspace's own path would
// push over the limit if the two were joined; it lists every file, its
// symlinks and its content, and leaves out what is excluded.
func TestBaselineReachesTheLongestPaths(t *testing.T) {
	dir := t.TempDir()
	root, deepDir := deepTree(t, dir)
	deep := deepDir + strings.Repeat("z", 255)
	for name, content := range map[string]string{deep: "deep", "top.txt": "top", "skip.log": "excluded"} {
		if err := root.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Symlink("top.txt", "link"); err != nil {
		t.Fatal(err)
	}
	stored := map[cas.Hash]string{}
	es, err := takeBaseline(context.Background(), dir, baselineOptions{excluded: func(rel string) bool { return filepath.Ext(rel) == ".log" }},
		func(b []byte) (cas.Hash, error) { h := cas.Sum(b); stored[h] = string(b); return h, nil })
	if err != nil {
		t.Fatalf("baseline of a workspace with a %d-byte path: %v", len(deep), err)
	}
	got := map[string]string{}
	for _, e := range es {
		if e.Type == index.TypeDir {
			continue
		}
		h, err := cas.ParseHash(string(e.Hash))
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		got[e.Path] = string(e.Type) + ":" + stored[h]
	}
	want := map[string]string{deep: "file:deep", "top.txt": "file:top", "link": "symlink:top.txt"}
	if len(got) != len(want) {
		t.Errorf("baseline lists %d paths, want %d", len(got), len(want))
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%.40s...: %q, want %q", p, got[p], w)
		}
	}
}

// deepTree opens dir as a root and makes 15 nested directories of 255
// bytes in it; it returns the root and their path with a trailing slash,
// to which a 255-byte name adds up to 15*256 + 255 = 4,095 bytes, the
// longest path the kernel takes.
func deepTree(t *testing.T, dir string) (*os.Root, string) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	deep := ""
	for i := range 15 {
		deep += strings.Repeat(string(rune('a'+i)), 255)
		if err := root.Mkdir(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		deep += "/"
	}
	return root, deep
}
