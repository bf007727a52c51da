package main

import (
	"bytes"
	"fmt"

	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
)

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// unifiedDiff renders a diff of a path between two contents; binary
// contents are summarised.
func unifiedDiff(path, fromLabel, toLabel string, from, to []byte) string {
	if bytes.Equal(from, to) {
		return ""
	}
	if isBinary(from) || isBinary(to) {
		return fmt.Sprintf("Binary file %s differs (%d -> %d bytes)\n", path, len(from), len(to))
	}
	return udiff.Unified(path+" ("+fromLabel+")", path+" ("+toLabel+")", string(from), string(to))
}

// lineCounts returns the added and removed lines between two contents, and
// whether either is binary.
func lineCounts(from, to []byte) (added, removed int, binary bool) {
	if isBinary(from) || isBinary(to) {
		return 0, 0, true
	}
	for _, e := range udiff.Lines(string(from), string(to)) {
		removed += strings.Count(string(from[e.Start:e.End]), "\n")
		if e.End > e.Start && from[e.End-1] != '\n' {
			removed++
		}
		added += strings.Count(e.New, "\n")
		if len(e.New) > 0 && !strings.HasSuffix(e.New, "\n") {
			added++
		}
	}
	return added, removed, false
}

// colorDiff colours a unified diff for a terminal (fatih/color turns
// itself off when stdout is not a TTY or NO_COLOR is set).
func colorDiff(d string) string {
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

// workspaceView is an opened store with the commands' own readers and
// printers on it.
type workspaceView struct{ *workspace.View }

// openView opens the store cmdStore finds.
func openView(cmdStore func() (string, *workspace.Meta, error)) (*workspaceView, error) {
	v, err := workspace.OpenView(cmdStore)
	if err != nil {
		return nil, err
	}
	return &workspaceView{v}, nil
}
