package session

import (
	"regexp"
	"strings"
	"testing"
)

// ValidID agrees with the rule as a regular expression.
func TestValidID(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	for _, s := range []string{"", "a", "5b0e7a3c-2f4d-4c6b-9a1e-8d7f6c5b4a39", ".x", "-x", "x.y_z-1", "a/b", "a b", "é", strings.Repeat("a", 128), strings.Repeat("a", 129), "a\n", "rollout-2026"} {
		if got, want := ValidID(s), re.MatchString(s); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidID(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	f.Add("5b0e7a3c-2f4d")
	f.Fuzz(func(t *testing.T, s string) {
		if ValidID(s) != re.MatchString(s) {
			t.Fatalf("ValidID(%q) disagrees with the rule", s)
		}
	})
}
