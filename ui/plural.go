package ui

import "fmt"

// plural is "1 file" or "n files": the count with the noun that fits it.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
