package workspace

import (
	"errors"
	"testing"
)

// A daemon's error reply comes back as an error of the kind its code
// names, with its message intact.
func TestErrorOfCode(t *testing.T) {
	for code, kind := range map[int]error{CodeUsage: ErrUsage, CodeRefused: ErrRefused, CodeNotMounted: ErrNotMounted, CodeBusy: ErrBusy, CodeError: errUnknown, 0: errUnknown, 99: errUnknown} {
		err := errorOfCode(code, "the message")
		if !errors.Is(err, kind) || err.Error() != "the message" {
			t.Errorf("code %d: %v (is %v: %v)", code, err, kind, errors.Is(err, kind))
		}
		for _, other := range []error{ErrUsage, ErrRefused, ErrNotMounted, ErrBusy} {
			if other != kind && errors.Is(err, other) {
				t.Errorf("code %d is also %v", code, other)
			}
		}
	}
}
