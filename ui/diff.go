package ui

import (
	"strings"

	"github.com/fatih/color"
)

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
