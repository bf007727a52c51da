// Package english writes counts the way a sentence needs them: "1 file",
// "2 files", so that every command says them the same way.
package english

import "strconv"

// Count is n with the noun that fits it: one for 1, else many.
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Noun(n, one, many)
}

// Noun is one when n is 1, else many.
func Noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
