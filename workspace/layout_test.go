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
		"ClaudeSettings": l.ClaudeSettings(),
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
