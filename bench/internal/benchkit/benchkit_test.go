package benchkit

import (
	"slices"
	"testing"
)

func TestSelect(t *testing.T) {
	rows := []string{"untar", "grep -r", "grep -r again", "rm -rf"}
	id := func(s string) string { return s }
	for _, c := range []struct {
		patterns string
		want     []string
	}{
		{"", rows},
		{"grep", []string{"grep -r", "grep -r again"}},
		{"grep,again", []string{"grep -r", "grep -r again"}}, // each once
		{"rm,untar", []string{"untar", "rm -rf"}},            // in order
		{"nothing", nil},
	} {
		if got := Select(rows, c.patterns, id); !slices.Equal(got, c.want) {
			t.Errorf("Select(%q) = %q, want %q", c.patterns, got, c.want)
		}
	}
}
