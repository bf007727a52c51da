package rewind

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The journal shown in docs/format.md parses and validates.
func TestFormatDocJournalParses(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1) {
		if !bytes.Contains(b[1], []byte(`"op":`)) || !bytes.Contains(b[1], []byte(`"paths":`)) {
			continue
		}
		n++
		if _, err := ParseJournal(b[1]); err != nil {
			t.Errorf("docs/format.md journal example does not parse: %v\n%s", err, b[1])
		}
	}
	if n != 1 {
		t.Errorf("found %d journal examples in docs/format.md, want 1", n)
	}
}
