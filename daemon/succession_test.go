package daemon

import (
	"os"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/workspace"
)

// The open windows a successor reads back: none when there is no file,
// the windows when it parses, and an error naming the file when it does
// not (the daemon logs it), never a silent nothing.
func TestReadOpenWindows(t *testing.T) {
	store := t.TempDir()
	path := workspace.Layout(store).OpenWindows()
	if ws, err := readOpenWindows(store); err != nil || ws != nil {
		t.Fatalf("no file: %v, %v", ws, err)
	}
	os.WriteFile(path, []byte(`[{"id":"w-1","tool":"Bash","agent":{}}]`), 0o600)
	if ws, err := readOpenWindows(store); err != nil || len(ws) != 1 || ws[0].ID != "w-1" || ws[0].Tool != "Bash" {
		t.Fatalf("a valid file: %+v, %v", ws, err)
	}
	os.WriteFile(path, []byte(`[{"id":"w-1","too`), 0o600)
	ws, err := readOpenWindows(store)
	if err == nil || ws != nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged file: %v, %v; want an error naming %s", ws, err, path)
	}
}
