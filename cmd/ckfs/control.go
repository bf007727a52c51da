package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/rewind"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The control protocol: one JSON request per line, one JSON reply per
// line, over a Unix socket with mode 0600 in the (0700) store directory.
// The daemon also checks that the peer runs as its own user.

type request struct {
	Op     string          `json:"op"` // open, close, status, flush, unmount, rewind, rollback, abandon
	Rewind *rewind.Request `json:"rewind,omitempty"`
	RunOp  string          `json:"run_op,omitempty"` // rollback, abandon: the rewind's op id
	ID     string          `json:"id,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Label  string          `json:"label,omitempty"`
	GC     *gcRequest      `json:"gc,omitempty"`
	Reason string          `json:"reason,omitempty"` // close: why, for a call that never finished
	// open: the agent process running the call and its shell command, to
	// match writes to calls that run at the same time.
	Agent   int    `json:"agent,omitempty"`
	Command string `json:"command,omitempty"`
}

type reply struct {
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	Code    int             `json:"code,omitempty"` // exit code for errors
	Seq     uint64          `json:"seq,omitempty"`
	ID      string          `json:"id,omitempty"`
	Status  *statusInfo     `json:"status,omitempty"`
	Outcome *rewind.Outcome `json:"outcome,omitempty"`
	Refused bool            `json:"refused,omitempty"`
	GC      *gc.Result      `json:"gc,omitempty"`
}

// statusInfo is what a live daemon reports.
type statusInfo struct {
	PID         int      `json:"pid"`
	Root        string   `json:"root"`
	Mountpoint  string   `json:"mountpoint"`
	OpenWindows []string `json:"open_windows"`
	Windows     int      `json:"windows_opened"`
	Records     int      `json:"records"`
	ObjectsNew  int      `json:"objects_new"`
	BytesStored int64    `json:"bytes_stored"`
	Skipped     int      `json:"skipped"`
	Errors      int      `json:"capture_errors"`
	// Disk-full events since the daemon started (writes refused with
	// ENOSPC, post-images not stored), when the current spell began, and
	// whether the store is out of room now.
	StoreFull      int       `json:"store_full_events,omitempty"`
	StoreFullSince time.Time `json:"store_full_since,omitempty"`
	StoreFullNow   bool      `json:"store_full_now,omitempty"`
}

const maxRequest = 64 << 10

func socketPath(store string) string { return filepath.Join(store, "control.sock") }

// serveControl accepts connections until ln is closed. conns counts the
// connections being served, so a stopping daemon can finish its replies.
func serveControl(ln *net.UnixListener, conns *sync.WaitGroup, log *slog.Logger, handle func(request) reply) {
	uid := os.Getuid()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Error("control: accept", "err", err)
			continue
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			serveConn(c, uid, log, handle)
		}()
	}
}

func serveConn(c *net.UnixConn, uid int, log *slog.Logger, handle func(request) reply) {
	defer c.Close()
	if err := checkPeer(c, uid); err != nil {
		log.Warn("control: refused connection", "err", err)
		json.NewEncoder(c).Encode(reply{Error: err.Error(), Code: ExitError})
		return
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), maxRequest)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		var req request
		var rep reply
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			rep = reply{Error: fmt.Sprintf("malformed request: %v", err), Code: ExitUsage}
		} else {
			rep = handle(req)
		}
		if err := enc.Encode(rep); err != nil {
			return
		}
	}
	if err := sc.Err(); err != nil {
		enc.Encode(reply{Error: fmt.Sprintf("malformed request: %v", err), Code: ExitUsage})
	}
}

// checkPeer refuses peers that run as another user.
func checkPeer(c *net.UnixConn, uid int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var peer int
	var perr error
	if err := raw.Control(func(fd uintptr) { peer, perr = peerUID(int(fd)) }); err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	if peer != uid {
		return fmt.Errorf("peer uid %d is not the daemon's uid %d", peer, uid)
	}
	return nil
}

// call sends one request to the daemon of store and returns its reply.
func call(store string, req request) (*reply, error) {
	sock := socketPath(store)
	addr, done, err := sockAddr(sock)
	if err != nil {
		return nil, withCode(ExitNotMounted, "%v", err)
	}
	c, err := net.DialTimeout("unix", addr, 2*time.Second)
	done()
	if err != nil {
		return nil, withCode(ExitNotMounted, "no ckfs daemon answers at %s (%v): run ckfs status to see why, or ckfs mount to start one", sock, err)
	}
	defer c.Close()
	// A window close hashes what the window wrote: allow for big files.
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return nil, fmt.Errorf("send to %s: %w", sock, err)
	}
	var rep reply
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&rep); err != nil {
		return nil, fmt.Errorf("read reply from %s: %w", sock, err)
	}
	if !rep.OK {
		code := rep.Code
		if code == 0 {
			code = ExitError
		}
		return &rep, withCode(code, "%s", rep.Error)
	}
	return &rep, nil
}
