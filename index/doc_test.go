package index

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every timeline record shown in docs/format.md parses and validates: the
// normative document and the code say the same.
func TestFormatDocRecordsParse(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	timeline := map[string]bool{}
	for _, k := range []Kind{KindOpen, KindClose, KindBefore, KindAfter, KindSkip, KindOutside, KindRewind, KindWatermark} {
		timeline[string(k)] = true
	}
	kindRE := regexp.MustCompile(`"kind":"([a-z_]+)"`)
	n := 0
	for _, b := range blocks {
		for _, line := range bytes.Split(b[1], []byte("\n")) {
			m := kindRE.FindSubmatch(line)
			if m == nil || !timeline[string(m[1])] || !bytes.HasPrefix(line, []byte(`{"v":1,"seq":`)) {
				continue
			}
			n++
			if _, err := ParseRecord(line); err != nil {
				t.Errorf("docs/format.md example does not parse: %v\n%s", err, line)
			}
		}
	}
	if n < 8 {
		t.Errorf("found only %d timeline examples in docs/format.md", n)
	}
	// The worked example of the path encoding.
	if !strings.Contains(string(doc), `"path":"caf\u0000e9.txt"`) {
		t.Error("the path encoding example is gone from docs/format.md")
	}
	if p, err := DecodePath("caf\x00e9.txt"); err != nil || p != "caf\xe9.txt" {
		t.Errorf("the documented path example decodes to %q, %v", p, err)
	}
}

// Unknown fields are ignored, as docs/format.md says: an older reader
// reads a record a newer ckfs wrote with an optional field it added.
func TestUnknownFieldsAreIgnored(t *testing.T) {
	line := []byte(`{"v":1,"seq":5,"time":"2026-12-01T09:00:00Z","kind":"close","window":"w","added_later":{"x":1}}`)
	r, err := ParseRecord(line)
	if err != nil || r.Kind != KindClose || r.Window != "w" {
		t.Fatalf("a record with an unknown field: %+v, %v", r, err)
	}
	if _, err := ParseRecord([]byte(`{"v":1,"seq":5,"time":"2026-12-01T09:00:00Z","kind":"snapshot","window":"w"}`)); err == nil {
		t.Error("an unknown kind was accepted")
	}
}
