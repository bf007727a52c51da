package hashid

import (
	"encoding/json"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	h := Sum([]byte("abc"))
	if !Valid(string(h)) || h.Hex() == "" || len(h.Hex()) != 2*Size {
		t.Fatalf("Sum gave %q", h)
	}
	// The BLAKE3 test vector for "abc".
	if want := "blake3:6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"; string(h) != want {
		t.Errorf("Sum(abc) = %s, want %s", h, want)
	}
	b, _ := json.Marshal(struct {
		A Hash `json:"a"`
		B Hash `json:"b"`
	}{h, ""})
	if string(b) != `{"a":"`+string(h)+`","b":null}` {
		t.Errorf("JSON %s", b)
	}
	var back struct{ A, B Hash }
	if err := json.Unmarshal(b, &back); err != nil || back.A != h || back.B != "" {
		t.Errorf("back %+v, %v", back, err)
	}
	for _, bad := range []string{`"blake3:XYZ"`, `"sha256:` + h.Hex() + `"`, `"blake3:` + h.Hex()[:63] + `F"`, `17`} {
		var x Hash
		if err := json.Unmarshal([]byte(bad), &x); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if _, err := Parse(string(h)); err != nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("blake3:6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85")
	f.Add("blake3:")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err != nil {
			return
		}
		if string(h) != s || len(h.Hex()) != 2*Size {
			t.Fatalf("Parse(%q) = %q", s, h)
		}
		b, _ := h.MarshalJSON()
		var back Hash
		if err := back.UnmarshalJSON(b); err != nil || back != h {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
	})
}
