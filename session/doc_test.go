package session

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Every session event and mark shown in docs/format.md parses and
// validates: the normative document and the code say the same.
func TestFormatDocSessionExamplesParse(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	events, marks := 0, 0
	for _, b := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1) {
		block := b[1]
		switch {
		case bytes.Contains(block, []byte(`"mark":`)):
			marks++
			one := bytes.Join(bytes.Fields(block), []byte(" ")) // one JSON value over several lines
			if _, err := ParseMark(one); err != nil {
				t.Errorf("docs/format.md mark example does not parse: %v\n%s", err, block)
			}
		case regexp.MustCompile(`"kind":"(start|prompt|tool_call|tool_result|summary|fork)"`).Match(block):
			for _, line := range bytes.Split(bytes.TrimSpace(block), []byte("\n")) {
				events++
				if _, err := ParseEvent(line); err != nil {
					t.Errorf("docs/format.md session event does not parse: %v\n%s", err, line)
				}
			}
		}
	}
	if events < 2 || marks < 1 {
		t.Errorf("found %d session events and %d marks in docs/format.md", events, marks)
	}
}
