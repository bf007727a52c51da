package capture

import (
	"fmt"
	"path"
	"strings"
)

// DefaultExcludes are never captured (they are still served): git's own
// internals, which git checks itself and which change on every command.
var DefaultExcludes = []string{".git"}

// Excluder decides which paths are not captured.
type Excluder struct{ patterns []string }

// NewExcluder checks the glob patterns (path.Match syntax). A pattern
// matches a path if it matches the path, any of its leading directories,
// or the base name of either; so "node_modules" excludes every
// node_modules tree and "*.o" every object file.
func NewExcluder(patterns []string) (*Excluder, error) {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("exclude pattern %q: %w", p, err)
		}
	}
	return &Excluder{patterns: patterns}, nil
}

// Excluded reports whether rel must not be captured.
func (e *Excluder) Excluded(rel string) bool {
	if e == nil || len(e.patterns) == 0 {
		return false
	}
	prefix := rel
	for {
		base := path.Base(prefix)
		for _, p := range e.patterns {
			if ok, _ := path.Match(p, prefix); ok {
				return true
			}
			if ok, _ := path.Match(p, base); ok {
				return true
			}
		}
		i := strings.LastIndexByte(prefix, '/')
		if i < 0 {
			return false
		}
		prefix = prefix[:i]
	}
}
