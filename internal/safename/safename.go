// Package safename checks the ids ckfs turns into file names (session ids,
// rewind operation ids): ASCII letters and digits, then also '.', '_' and
// '-', so an id can never be a path, hidden, or an option.
package safename

// Valid reports whether s is 1 to max bytes: a letter or digit first, then
// letters, digits, '.', '_' or '-'.
func Valid(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}
