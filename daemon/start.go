package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
)

// Server is a daemon serving in this process: the same mount, capture,
// control socket, rewind and collection as the ckfs daemon process, for
// tests and for programs that embed ckfs. While it serves, the process's
// umask is 0 (the kernel has applied the caller's already); Stop gives it
// back.
type Server struct {
	cancel context.CancelFunc
	done   chan error
}

// Start mounts and serves o in this process and returns once the mount is
// up, or with the error that kept it from coming up.
func Start(ctx context.Context, o Options) (*Server, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &readyLine{line: make(chan string, 1)}
	s := &Server{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Run(ctx, o, r) }()
	select {
	case line := <-r.line:
		rep, _ := parseReady(line)
		if line == "ok" {
			return s, nil
		}
		cancel()
		err := <-s.done
		if err == nil && rep != nil {
			err = rep
		} else if err == nil {
			err = errors.New(line)
		}
		return nil, err
	case err := <-s.done:
		cancel()
		if err == nil {
			err = fmt.Errorf("the daemon for %s stopped before it was ready", o.Mountpoint)
		}
		return nil, err
	}
}

// Stop unmounts (finishing what capture has in hand first) and returns
// once the daemon has stopped.
func (s *Server) Stop() error {
	s.cancel()
	return <-s.done
}

// readyLine passes the first line Run reports on to Start.
type readyLine struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	sent bool
	line chan string
}

func (r *readyLine) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.Write(p)
	if i := bytes.IndexByte(r.buf.Bytes(), '\n'); i >= 0 && !r.sent {
		r.sent = true
		r.line <- string(r.buf.Bytes()[:i])
	}
	return len(p), nil
}
