package beneath

import "testing"

// The check every open makes runs on the FUSE request path: it allocates
// nothing for a plain path, and refuses every element that is not one.
func TestCheck(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = check("a/bb/ccc/d.go") }); n != 0 {
		t.Errorf("check allocates %v times a call", n)
	}
	for _, bad := range []string{"a//b", "a/", "./a", "a/..", "/a", "..", ""} {
		if check(bad) == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	for _, ok := range []string{"a", "a/b", "..a/b.", "a/.b", "...", "a/b/c/d"} {
		if err := check(ok); err != nil {
			t.Errorf("refused %q: %v", ok, err)
		}
	}
}
