package index

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Extended attributes. ckfs records the attributes a user would expect a
// "put it back" to bring back: the user namespace and POSIX ACLs (which
// are extended attributes too). Kernel-managed namespaces (security.*,
// trusted.*, other system.*) are left alone: restoring them needs
// privileges a rewind does not assume and they are not the user's data.
//
// An attribute set is stored as one object: a JSON object whose keys are
// the attribute names and whose values are the standard base64 of the
// values, keys in byte order, no spaces (what encoding/json writes for a
// map). An empty set is not stored: the state's XAttrs is "".

// XAttrCaptured reports whether ckfs records the attribute name.
func XAttrCaptured(name string) bool {
	return strings.HasPrefix(name, "user.") || name == "system.posix_acl_access" || name == "system.posix_acl_default"
}

// EncodeXAttrs returns the object content of an attribute set (nil for an
// empty one).
func EncodeXAttrs(attrs map[string][]byte) []byte {
	if len(attrs) == 0 {
		return nil
	}
	m := make(map[string]string, len(attrs))
	for k, v := range attrs {
		m[k] = base64.StdEncoding.EncodeToString(v)
	}
	b, _ := json.Marshal(m) // sorted keys: canonical
	return b
}

// DecodeXAttrs parses an attribute set object.
func DecodeXAttrs(b []byte) (map[string][]byte, error) {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("extended attributes: %w", err)
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		if !XAttrCaptured(k) {
			return nil, fmt.Errorf("extended attributes: %q is not a recorded namespace", k)
		}
		d, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("extended attribute %s: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}

// XAttrNames returns the names of a set in order.
func XAttrNames(attrs map[string][]byte) []string {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
