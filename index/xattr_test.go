package index

import (
	"bytes"
	"testing"
)

func TestXAttrsRoundTrip(t *testing.T) {
	in := map[string][]byte{"user.b": {0, 1, 2}, "user.a": []byte("text"), "system.posix_acl_access": {2, 0, 0, 0}}
	enc := EncodeXAttrs(in)
	if !bytes.Equal(enc, EncodeXAttrs(in)) {
		t.Fatal("the encoding is not deterministic")
	}
	out, err := DecodeXAttrs(enc)
	if err != nil || len(out) != len(in) || !bytes.Equal(out["user.b"], in["user.b"]) {
		t.Fatalf("round trip: %v %v", out, err)
	}
	if EncodeXAttrs(nil) != nil {
		t.Error("an empty set has an object")
	}
	if _, err := DecodeXAttrs([]byte(`{"security.selinux":"eA=="}`)); err == nil {
		t.Error("a namespace ckfs does not record was accepted")
	}
}

// Whatever an object holds, decoding it either fails or gives a set that
// encodes back to a set that decodes the same.
func FuzzDecodeXAttrs(f *testing.F) {
	f.Add([]byte(`{"user.a":"dGV4dA=="}`))
	f.Add([]byte(`{"system.posix_acl_access":"AgAAAAEABgD/////"}`))
	f.Add([]byte(`{"user.a":"!!"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeXAttrs(b)
		if err != nil {
			return
		}
		for k := range m {
			if !XAttrCaptured(k) {
				t.Fatalf("decoded a name outside the recorded namespaces: %q", k)
			}
		}
		m2, err := DecodeXAttrs(EncodeXAttrs(m))
		if len(m) > 0 && (err != nil || len(m2) != len(m)) {
			t.Fatalf("re-encoding changed the set: %v %v", m2, err)
		}
	})
}
