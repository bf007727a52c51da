package index

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// File names are bytes, not text: Linux allows any byte but '/' and NUL in
// a name, and JSON strings hold only valid UTF-8 (encoding/json replaces
// anything else with U+FFFD, which would make ckfs restore a file under
// another name). So a path that is not valid UTF-8 is written with each
// byte that is not part of a valid UTF-8 sequence as NUL followed by its
// two lowercase hex digits ("\u0000ff" in the JSON text). NUL never occurs
// in a real path, so the encoding is unambiguous, and a reader that
// predates it refuses such a record (a path with NUL) instead of misreading
// it. docs/format.md section 3 specifies it.

// EncodePath returns p in its record form.
func EncodePath(p string) string {
	if utf8.ValidString(p) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, "\x00%02x", p[i])
		} else {
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

// DecodePath returns the path a record form stands for.
func DecodePath(s string) (string, error) {
	if strings.IndexByte(s, 0) < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0 {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("path %q: a NUL escape needs two hex digits", s)
		}
		var c byte
		for _, h := range []byte{s[i+1], s[i+2]} {
			switch {
			case h >= '0' && h <= '9':
				c = c<<4 | (h - '0')
			case h >= 'a' && h <= 'f':
				c = c<<4 | (h - 'a' + 10)
			default:
				return "", fmt.Errorf("path %q: bad hex digit %q after NUL", s, h)
			}
		}
		if c < 0x80 {
			return "", fmt.Errorf("path %q: NUL escape of byte %#x, which is valid UTF-8 on its own", s, c)
		}
		b.WriteByte(c)
		i += 2
	}
	out := b.String()
	if EncodePath(out) != s {
		return "", fmt.Errorf("path %q is not in canonical form", s)
	}
	return out, nil
}

// Display returns p for people: as is when it is printable UTF-8, else
// quoted in Go syntax (control characters and invalid bytes escaped), so a
// name can never forge a line of output or a terminal escape.
func Display(p string) string {
	if !utf8.ValidString(p) {
		return fmt.Sprintf("%q", p)
	}
	for _, r := range p {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("%q", p)
		}
	}
	return p
}
