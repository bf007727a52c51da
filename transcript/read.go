package transcript

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxSize is the largest transcript ckfs reads. A path given by a hook's
// input may name anything: only a regular file up to this size is read,
// never a device (/dev/zero), a FIFO (which blocks) or a directory.
const MaxSize = 512 << 20

// ErrNotTranscript means the path names no regular file, or one over
// MaxSize.
var ErrNotTranscript = errors.New("not a transcript")

// readFile reads the regular file at path, at most MaxSize bytes. It opens
// without blocking (a FIFO would otherwise wait for a writer), then checks
// what it opened.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a %s, not a regular file", ErrNotTranscript, path, fi.Mode().Type())
	}
	if fi.Size() > MaxSize {
		return nil, fmt.Errorf("%w: %s holds %d bytes, more than the %d ckfs reads", ErrNotTranscript, path, fi.Size(), MaxSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: %s grew past %d bytes while read", ErrNotTranscript, path, MaxSize)
	}
	return data, nil
}
