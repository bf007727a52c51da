// Package daemon is a running mount: it opens a workspace's store and
// timeline (holding its lock), checks the disk against the timeline, serves
// the passthrough through fusefs with capture behind it, answers the
// control socket (windows, flushes, status, rewinds, collections, unmount),
// pushes to the store's remotes, and on stop finishes capture before it
// unmounts. Run is the daemon process's body: open, serve, stop (run.go);
// Spawn starts that process and waits for its ready line; Start serves one
// in this process (tests use it, not a copy).
package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Options are what a daemon serves and how.
type Options struct {
	Store       string
	Root        string // the repository (backing directory)
	Mountpoint  string // == Root for a mount in place
	AllowOther  bool
	Debug       bool
	Excludes    []string
	MaxFileSize int64
	Retention   config.Retention // for automatic collection
	// IO is capture.io: config.IOPassthrough, or the cached model
	// (config.IOCached, or empty).
	IO string
	// OwnProcess says this process serves this one mount (the ckfs daemon
	// process, ckfs mount --foreground), so the mount may resolve backing
	// paths from the process's working directory (fusefs.ServeFromCwd).
	// An in-process Start leaves it false.
	OwnProcess bool `json:"-"`
}

// daemon is a running mount.
type daemon struct {
	o      Options
	meta   *workspace.Meta // the store's store.json, read at open
	log    *slog.Logger
	rec    *capture.Recorder
	tl     *index.Writer
	srv    *fuse.Server
	fsys   *fusefs.FS
	store  *cas.Local
	rootFd int
	stop   chan string // reasons to stop
	mu     sync.Mutex
	closed bool
	opMu   sync.Mutex // one rewind or collection at a time

	lastSizeCheck time.Time
	sizeEvery     time.Duration
	up            *uploader // pushes to the store's remotes

	// undo is what open acquired, released last first: all of it when
	// open fails, the rest after stop's ordered steps.
	undo cleanups
	// ln is the control socket; conns counts its connections.
	ln    *net.UnixListener
	conns sync.WaitGroup
	// unmounted: stop has unmounted already (or the kernel did).
	unmounted bool
	// succ is what the supervisor gave this worker (supervise_linux.go);
	// tookOver says this daemon serves a connection a dead one mounted.
	succ      Succession
	tookOver  bool
	handedOff bool   // the supervisor has the connection: a successor can take it over
	nodes     []byte // a successor's: the node journal its predecessor wrote
}

// cleanups is a stack of clean-up steps, run last first.
type cleanups []func()

func (c *cleanups) push(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}

// unmountHard unmounts, lazily if the mount is busy, so a signalled daemon
// never leaves a dead mount behind.
func (d *daemon) unmountHard() {
	mnt, log := d.o.Mountpoint, d.log
	if err := d.unmount(); err != nil {
		log.Warn("unmount failed; detaching", "err", err)
		if err := workspace.Detach(mnt); err != nil {
			log.Error("detach failed", "err", err)
		}
	}
}

// handle answers one control request.
func (d *daemon) handle(req workspace.Request) workspace.Reply {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return workspace.Reply{Error: "the daemon is stopping", Code: workspace.CodeNotMounted}
	}
	if req.Op == workspace.OpOpen || req.Op == workspace.OpClose || req.Op == workspace.OpFlush {
		// A boundary: no write descriptor is kept past it.
		defer d.fsys.CloseWriteFds()
	}
	switch req.Op {
	case workspace.OpOpen:
		seq, err := d.rec.OpenAgentWindow(req.ID, req.Tool, req.Label, capture.Agent{PID: req.Agent, Command: req.Command, Marked: req.Marked})
		d.writeOpenWindows()
		if err != nil {
			return workspace.Reply{Error: fmt.Sprintf("open window %q: %v", req.ID, err), Code: codeOf(err)}
		}
		return workspace.Reply{OK: true, Seq: seq, ID: req.ID}
	case workspace.OpClose:
		ids := d.rec.OpenWindows()
		if req.ID == "" && len(ids) > 0 {
			req.ID = ids[len(ids)-1]
		}
		seq, err := d.rec.CloseWindowReason(req.ID, req.Reason)
		d.writeOpenWindows()
		if err != nil {
			return workspace.Reply{Error: fmt.Sprintf("close window %q: %v", req.ID, err), Code: codeOf(err)}
		}
		d.up.poke()
		return workspace.Reply{OK: true, Seq: seq, ID: req.ID}
	case workspace.OpFlush:
		if err := d.rec.Flush(); err != nil {
			return workspace.Reply{Error: err.Error()}
		}
		// The seq is the file timeline's checkpoint now (for marks).
		return workspace.Reply{OK: true, Seq: d.tl.LastSeq()}
	case workspace.OpDrain:
		if !d.fsys.Drain(drainWait) {
			d.log.Warn("directory operations still in flight after the wait; the successor will carry them out again", "wait", drainWait)
		}
		return workspace.Reply{OK: true}
	case workspace.OpStatus:
		s := d.rec.Stats()
		return workspace.Reply{OK: true, Status: &workspace.StatusInfo{
			PID: os.Getpid(), Root: d.o.Root, Mountpoint: d.o.Mountpoint,
			OpenWindows: d.rec.OpenWindows(), Windows: s.Windows, Records: s.Records,
			ObjectsNew: s.ObjectsNew, BytesStored: s.BytesStored, Skipped: s.Skipped, Errors: s.CaptureError, Batched: s.Prefetched,
			StoreFull: s.StoreFull, StoreFullSince: s.StoreFullSince, StoreFullNow: d.rec.StoreFullNow(),
		}}
	case workspace.OpRewind, workspace.OpRollback, workspace.OpAbandon:
		return d.rewind(req)
	case workspace.OpGC:
		if req.GC == nil {
			return workspace.Reply{Error: "gc request without parameters", Code: workspace.CodeUsage}
		}
		res, err := d.collect(req.GC.Policy, req.GC.DryRun)
		if err != nil {
			return workspace.Reply{Error: err.Error(), Code: codeOf(err)}
		}
		return workspace.Reply{OK: true, GC: res}
	case workspace.OpUnmount:
		if err := d.rec.Flush(); err != nil {
			d.log.Error("flush before unmount", "err", err)
		}
		if err := d.unmount(); err != nil {
			// fusermount's own message spans lines; the processes that
			// hold the mount say more.
			msg := fmt.Sprintf("unmount %s: %s", d.o.Mountpoint, strings.Join(strings.Fields(err.Error()), " "))
			if busy := workspace.BusyProcesses(d.o.Mountpoint); len(busy) > 0 {
				msg = fmt.Sprintf("unmount %s: still in use by: %s", d.o.Mountpoint, strings.Join(busy, "; "))
			}
			return workspace.Reply{Error: msg, Code: workspace.CodeBusy}
		}
		d.stop <- "unmounted"
		return workspace.Reply{OK: true}
	}
	return workspace.Reply{Error: fmt.Sprintf("unknown op %q", req.Op), Code: workspace.CodeUsage}
}

// drainWait is how long a drain waits for the directory operations in
// flight to be answered.
const drainWait = 5 * time.Second

// codeOf is the reply code of an error: its kind carried over the socket.
func codeOf(err error) int {
	switch {
	case errors.Is(err, capture.ErrNoWindow), errors.Is(err, capture.ErrWindowOpen), errors.Is(err, workspace.ErrRefused):
		return workspace.CodeRefused
	case errors.Is(err, workspace.ErrUsage):
		return workspace.CodeUsage
	case errors.Is(err, workspace.ErrBusy):
		return workspace.CodeBusy
	}
	return workspace.CodeError
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
