package index

import (
	"fmt"
	"path"
	"strings"
)

// MatchPaths returns whether a path lies at or under one of patterns:
// path.Match globs matched against the path and each of its parent
// directories, and, for a pattern without a "/", against their base
// names too ("src" takes everything under src, "*.md" every Markdown
// file at any depth, "docs/*.md" those directly in docs). A leading "./"
// and a trailing "/" are ignored. No patterns match every path.
func MatchPaths(patterns []string) (func(rel string) bool, error) {
	clean := make([]string, len(patterns))
	for i, pat := range patterns {
		if _, err := path.Match(pat, "x"); err != nil {
			return nil, fmt.Errorf("bad path pattern %q: %w", pat, err)
		}
		clean[i] = strings.TrimSuffix(strings.TrimPrefix(pat, "./"), "/")
	}
	return func(rel string) bool {
		if len(clean) == 0 {
			return true
		}
		for _, pat := range clean {
			base := !strings.Contains(pat, "/")
			for q := rel; q != "."; q = parentOf(q) {
				if ok, _ := path.Match(pat, q); ok {
					return true
				}
				if ok, _ := path.Match(pat, path.Base(q)); ok && base {
					return true
				}
			}
		}
		return false
	}, nil
}

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}
