package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A transcript path from a hook's input may name anything: a device that
// never ends or a FIFO nobody writes is refused at once, not read.
func TestReadOnlyRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, t.TempDir()} {
		if _, _, err := MarkPosition(p, Claude, "hi"); !errors.Is(err, ErrNotTranscript) {
			t.Errorf("MarkPosition(%s): %v, want ErrNotTranscript", p, err)
		}
		if _, err := Load(p, Claude); !errors.Is(err, ErrNotTranscript) {
			t.Errorf("Load(%s): %v, want ErrNotTranscript", p, err)
		}
	}
	// A sparse file over the limit is refused by its size, unread.
	big := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxSize + 1)
	f.Close()
	if _, _, err := MarkPosition(big, Claude, "hi"); !errors.Is(err, ErrNotTranscript) {
		t.Errorf("MarkPosition of %d bytes: %v, want ErrNotTranscript", MaxSize+1, err)
	}
}
