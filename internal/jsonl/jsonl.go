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

// firstRead is how much of the end of a file Tail reads first: a log's
// last line is almost always far shorter, and a hook reads a log's end on
// every tool call, so reading the whole window would make its cost grow
// with the log.
const firstRead = 64 << 10

// Tail returns the last complete line of f (without its newline; nil when
// there is none), the offset just after it, where a torn tail (an
// unterminated last line) would begin, and the file's size. It reads the
// end of the file backwards in growing pieces, never more than the last
// window bytes.
func Tail(f *os.File, window int64) (last []byte, end, size int64, err error) {
	return tail(f, window, firstRead)
}

func tail(f *os.File, window, first int64) (last []byte, end, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	size = st.Size()
	for n := min(window, first); ; n = min(window, 4*n) {
		start := max(0, size-n)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, 0, 0, err
		}
		nl := bytes.LastIndexByte(buf, '\n')
		whole := start == 0 || n >= window
		switch {
		case nl < 0 && !whole:
			continue // a torn tail longer than this piece
		case nl < 0 && start > 0:
			return nil, 0, 0, ErrNoLine
		case nl < 0:
			return nil, 0, size, nil // empty, or only a torn first line
		}
		last = buf[:nl]
		if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		} else if !whole {
			continue // the line may begin before this piece
		}
		return last, start + int64(nl) + 1, size, nil
	}
}
