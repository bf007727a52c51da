package safename

import (
	"regexp"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"a", true}, {"toolu_01.x-y", true}, {"9", true},
		{"", false}, {".a", false}, {"-a", false}, {"_a", false},
		{"a/b", false}, {"..", false}, {"a b", false}, {"é", false},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
	} {
		if got := Valid(c.s, 64); got != c.want {
			t.Errorf("Valid(%q, 64) = %v, want %v", c.s, got, c.want)
		}
	}
}

// The loop accepts exactly what the pattern it replaced accepted.
func FuzzValidMatchesPattern(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	for _, s := range []string{"a", ".a", "a.", "a\n", "toolu_1", strings.Repeat("b", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s, 64), re.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, pattern says %v", s, got, want)
		}
	})
}
