package transcript

import (
	"bytes"
	"encoding/json"
)

// setString replaces the string value at a key path of a JSON object line
// (["sessionId"], ["payload","id"]) and leaves every other byte as it was:
// a fork changes exactly the session id of each line it copies, whatever
// key order, spacing or escapes the agent wrote. It returns false if the
// path is absent or its value is not a string.
func setString(line []byte, path []string, val string) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	start, end, ok := find(dec, line, path)
	if !ok {
		return nil, false
	}
	enc, _ := json.Marshal(val)
	out := make([]byte, 0, len(line)+len(enc))
	out = append(out, line[:start]...)
	out = append(out, enc...)
	return append(out, line[end:]...), true
}

// find walks the object whose '{' dec has just read, looking for path; it
// returns the byte range of the string value.
func find(dec *json.Decoder, line []byte, path []string) (int64, int64, bool) {
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		key, _ := kt.(string)
		afterKey := dec.InputOffset()
		if key != path[0] {
			if !skip(dec) {
				return 0, 0, false
			}
			continue
		}
		vt, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		if len(path) == 1 {
			if _, ok := vt.(string); !ok {
				return 0, 0, false
			}
			end := dec.InputOffset()
			start := afterKey
			for start < end && (line[start] == ' ' || line[start] == ':' || line[start] == '\t' || line[start] == '\n' || line[start] == '\r') {
				start++
			}
			return start, end, true
		}
		if vt != json.Delim('{') {
			return 0, 0, false
		}
		return find(dec, line, path[1:])
	}
	return 0, 0, false
}

// skip consumes one value.
func skip(dec *json.Decoder) bool {
	t, err := dec.Token()
	if err != nil {
		return false
	}
	d, ok := t.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return true
	}
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	}
	return true
}
