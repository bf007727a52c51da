package ui

import (
	"encoding/json"
	"io"
	"strings"
)

// JSON prints v as indented JSON.
func JSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Trunc puts s on one line of at most n bytes and an ellipsis.
func Trunc(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Indent puts pre before every line of s.
func Indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "")
}

// statusCodes are the one-letter codes of a file's change in a window.
var statusCodes = map[string]string{"added": "A", "deleted": "D", "modified": "M", "mode": "m", "type": "T", "skipped": "!"}
