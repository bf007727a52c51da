package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every file Layout names is in the store tree of docs/format.md, under
// the same name.
func TestLayoutMatchesTheFormat(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	tree := string(doc)
	tree = tree[strings.Index(tree, "## 1. The store tree"):strings.Index(tree, "## 2. Objects")]
	l := Layout("/s")
	for name, p := range map[string]string{
		"Meta": l.Meta(), "Objects": l.Objects(), "Timeline": l.Timeline(), "TimelineCache": l.TimelineCache(),
		"Marks": l.Marks(), "Sessions": l.Sessions(), "Journals": l.Journals(), "Quarantine": l.Quarantine(),
		"DaemonState": l.DaemonState(), "Socket": l.Socket(), "DaemonLog": l.DaemonLog(), "HookLog": l.HookLog(),
		"AgentSettings": l.AgentSettings("claude"), "NodeJournal": l.NodeJournal(), "OpenWindows": l.OpenWindows(),
	} {
		rel := strings.TrimPrefix(p, "/s/")
		first := strings.Split(rel, "/")[0]
		if !strings.Contains(tree, first) {
			t.Errorf("Layout.%s is %s, which docs/format.md section 1 does not list", name, rel)
		}
	}
}

func FuzzParseRemotes(f *testing.F) {
	f.Add([]byte(`{"workspace":"0193a1b2-c3d4","remotes":{"team":{"url":"s3://agents/ckfs","endpoint":"http://127.0.0.1:8333","pushed_seq":12}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseRemotes(data)
		if err != nil {
			return
		}
		for name, r := range c.Remotes {
			if !ValidRemoteName(name) || !strings.HasPrefix(r.URL, "s3://") {
				t.Fatalf("accepted remote %q %q", name, r.URL)
			}
		}
	})
}

// A repository's default store is in the store base, and found from any
// directory inside the repository once it exists.
func TestDefaultStoreIsFound(t *testing.T) {
	base, root := t.TempDir(), t.TempDir()
	t.Setenv("CKFS_HOME", base)
	store, err := DefaultStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(store) != base || !strings.HasPrefix(filepath.Base(store), filepath.Base(root)+"-") {
		t.Fatalf("default store of %s is %s; want a directory named after it in %s", root, store, base)
	}
	if err := os.MkdirAll(filepath.Join(root, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Init(store, root); err != nil {
		t.Fatal(err)
	}
	got, m, err := find("", filepath.Join(root, "sub", "dir"))
	if err != nil || got != store || m.Root != root {
		t.Fatalf("Find from inside the repository: %s, %+v, %v; want %s", got, m, err, store)
	}
}

// A store that resolves beneath the workspace, through a symbolic link, is
// refused (the daemon would deadlock on its own mount); an existing store
// directory open to others is made private.
func TestInitRefusesStoreInsideWorkspace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	os.Mkdir(root, 0o755)
	os.Symlink(filepath.Join(root, "hidden"), filepath.Join(base, "home"))
	if err := Init(filepath.Join(base, "home", "repo-1"), root); err == nil || !strings.Contains(err.Error(), "inside the workspace") {
		t.Errorf("a store linked into the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "hidden")); err == nil {
		t.Error("the refused store was created inside the workspace")
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	if err := Init(open, root); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o700 {
		t.Errorf("store mode %o, want 0700", fi.Mode().Perm())
	}
}
