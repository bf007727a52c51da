package workspace

import (
	"strings"
)

// FirstLine is s up to its first line break (marked with an ellipsis),
// cut to at most n bytes.
func FirstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
