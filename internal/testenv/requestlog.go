package testenv

import (
	"bytes"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
)

// RequestLog is go-fuse's request log (the debug log a mount with Debug
// set writes through the log package, from its serving goroutines), kept
// while a test runs.
type RequestLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// CaptureRequestLog sends the log package's output to a RequestLog until
// the test ends.
func CaptureRequestLog(t testing.TB) *RequestLog {
	l := &RequestLog{}
	log.SetOutput(l)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	return l
}

func (l *RequestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Count is how many requests of the opcode op (OPEN, GETXATTR) the log
// holds.
func (l *RequestLog) Count(op string) int {
	return l.CountWith(op, "")
}

// CountWith is how many requests of the opcode op the log holds whose
// line also holds s (an attribute's name, a file's).
func (l *RequestLog) CountWith(op, s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, " "+op+" ") && strings.Contains(line, s) {
			n++
		}
	}
	return n
}
