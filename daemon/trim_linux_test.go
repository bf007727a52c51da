package daemon

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

var written = []int{1, 2, 3} // data the trim must not touch

// rssFile is this process's resident file-backed memory, in kB.
func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(v)[0])
			return kb
		}
	}
	t.Skip("no RssFile line")
	return 0
}

// The executable's read-only pages leave the resident set; what the
// process wrote stays.
func TestTrimBinaryPages(t *testing.T) {
	written[1] = 20
	before := rssFile(t)
	trimBinaryPages()
	after := rssFile(t)
	if after >= before {
		t.Errorf("resident file pages %d kB before the trim, %d kB after", before, after)
	}
	if written[0] != 1 || written[1] != 20 || written[2] != 3 {
		t.Errorf("written data changed: %v", written)
	}
	t.Logf("resident file pages: %d kB -> %d kB", before, after)
}
