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

// A store.json that cannot be read back is written again by the mount
// when the store is the one its directory gets by default (found by the
// directory's own path, it can serve no other); for a store given with
// --store, the error names the file and what to write into it.
func TestInitRewritesADamagedMetaOfTheDefaultStore(t *testing.T) {
	base := t.TempDir()
	t.Setenv("CKFS_HOME", filepath.Join(base, "home"))
	root := filepath.Join(base, "repo")
	os.Mkdir(root, 0o755)
	def, err := DefaultStore(root)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "elsewhere")
	for _, dir := range []string{def, other} {
		if err := Init(dir, root); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(Layout(dir).Meta(), []byte(`{"version":1,"ro`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Init(def, root); err != nil {
		t.Fatalf("the default store's damaged store.json: %v", err)
	}
	if m, err := ReadMeta(def); err != nil || m.Root != root {
		t.Errorf("store.json after the mount: %+v, %v; want it serving %s", m, err, root)
	}
	err = Init(other, root)
	if err == nil || !strings.Contains(err.Error(), Layout(other).Meta()) || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), `"root": "`+root+`"`) {
		t.Errorf("a --store's damaged store.json: %v", err)
	}
}
