package index

import "testing"

func TestMatchPaths(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		path     string
		want     bool
	}{
		{nil, "any/thing", true},
		{[]string{"src"}, "src/a/b.go", true},
		{[]string{"src/"}, "src", true},
		{[]string{"./src"}, "src/x", true},
		{[]string{"src"}, "srcx/a", false},
		{[]string{"*.md"}, "docs/deep/a.md", true},
		{[]string{"*.md"}, "a.mdx", false},
		{[]string{"docs/*.md"}, "docs/a.md", true},
		{[]string{"docs/*.md"}, "docs/deep/a.md", false},
		{[]string{"docs/*.md"}, "other/docs/a.md", false},
		{[]string{"node_modules"}, "web/node_modules/x/y.js", true},
		{[]string{"a", "b"}, "b/c", true},
	} {
		match, err := MatchPaths(c.patterns)
		if err != nil {
			t.Fatal(err)
		}
		if got := match(c.path); got != c.want {
			t.Errorf("MatchPaths(%q)(%q) = %v, want %v", c.patterns, c.path, got, c.want)
		}
	}
	if _, err := MatchPaths([]string{"["}); err == nil {
		t.Error("a bad pattern is accepted")
	}
}
