package ui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
)

// UnifiedDiff renders a diff of a path between two contents; binary
// contents are summarised.
func UnifiedDiff(path, fromLabel, toLabel string, from, to []byte) string {
	if bytes.Equal(from, to) {
		return ""
	}
	if workspace.IsBinary(from) || workspace.IsBinary(to) {
		return fmt.Sprintf("Binary file %s differs (%d -> %d bytes)\n", path, len(from), len(to))
	}
	return udiff.Unified(path+" ("+fromLabel+")", path+" ("+toLabel+")", string(from), string(to))
}

// ColorDiff colours a unified diff for a terminal (fatih/color turns
// itself off when stdout is not a TTY or NO_COLOR is set).
func ColorDiff(d string) string {
	if color.NoColor {
		return d
	}
	add, del, hunk := color.New(color.FgGreen).SprintFunc(), color.New(color.FgRed).SprintFunc(), color.New(color.FgCyan).SprintFunc()
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			lines[i] = color.New(color.Bold).Sprint(l)
		case strings.HasPrefix(l, "+"):
			lines[i] = add(l)
		case strings.HasPrefix(l, "-"):
			lines[i] = del(l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = hunk(l)
		}
	}
	return strings.Join(lines, "")
}
