// Package jsonl reads the end of an append-only JSON-lines file: the one
// tail reader the timeline and the session logs share.
package jsonl

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// ErrNoLine means the last window bytes of a file hold no newline: its
// last line is longer than any record, or the tail is garbage.
var ErrNoLine = errors.New("no complete line in the end of the file")

// Tail returns the last complete line of f (without its newline; nil when
// there is none), the offset just after it, where a torn tail (an
// unterminated last line) would begin, and the file's size. It reads at
// most the last window bytes.
func Tail(f *os.File, window int64) (last []byte, end, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	size = st.Size()
	start := max(0, size-window)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, 0, 0, err
	}
	nl := bytes.LastIndexByte(buf, '\n')
	if nl < 0 {
		if start > 0 {
			return nil, 0, 0, ErrNoLine
		}
		return nil, 0, size, nil // empty, or only a torn first line
	}
	last = buf[:nl]
	if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	return last, start + int64(nl) + 1, size, nil
}
