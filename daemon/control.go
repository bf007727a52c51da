package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"

	"github.com/ckfs-dev/ckfs/workspace"
)

// The control protocol: one JSON request per line, one JSON reply per
// line, over a Unix socket with mode 0600 in the (0700) store directory.
// The daemon also checks that the peer runs as its own user.

// serveControl accepts connections until ln is closed. conns counts the
// connections being served, so a stopping daemon can finish its replies.
func serveControl(ln *net.UnixListener, conns *sync.WaitGroup, log *slog.Logger, handle func(workspace.Request) workspace.Reply) {
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

func serveConn(c *net.UnixConn, uid int, log *slog.Logger, handle func(workspace.Request) workspace.Reply) {
	defer c.Close()
	if err := checkPeer(c, uid); err != nil {
		log.Warn("control: refused connection", "err", err)
		json.NewEncoder(c).Encode(workspace.Reply{Error: err.Error(), Code: workspace.CodeError})
		return
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), workspace.MaxRequest)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		var req workspace.Request
		var rep workspace.Reply
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			rep = workspace.Reply{Error: fmt.Sprintf("malformed request: %v", err), Code: workspace.CodeUsage}
		} else {
			rep = handle(req)
		}
		if err := enc.Encode(rep); err != nil {
			return
		}
	}
	if err := sc.Err(); err != nil {
		enc.Encode(workspace.Reply{Error: fmt.Sprintf("malformed request: %v", err), Code: workspace.CodeUsage})
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
