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

// Size is a number of bytes in the one form every command writes sizes
// in: binary units, one decimal where it is not whole ("512B", "1.5KiB",
// "16MiB").
func Size(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m {
			if n%u.m == 0 {
				return strconv.FormatInt(n/u.m, 10) + u.s
			}
			return strconv.FormatFloat(float64(n)/float64(u.m), 'f', 1, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
