package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/proc"
	"github.com/ckfs-dev/ckfs/internal/testhooks"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
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
}

// Run mounts and serves until it is told to unmount, is signalled, or
// the mount goes away. It reports "ok" or the error on ready.
func Run(ctx context.Context, o Options, ready io.Writer) (err error) {
	defer func() {
		if err != nil {
			fmt.Fprintf(ready, "error: %v\n", err)
		}
	}()
	// A long-running daemon keeps its heap small: collect when the heap
	// has grown by a quarter. The inode tables of a large tree dominate it
	// (about 440 bytes a walked entry in go-fuse), and the peak RSS is
	// about 1+GOGC/100 times them; the cost of collecting that often did
	// not show on any passthrough row (bench/RESULTS.md).
	debug.SetGCPercent(25)
	// The kernel has already applied the caller's umask to the modes it
	// sends; the daemon must not apply its own on top.
	// In-process (Start), the umask is given back when the daemon stops.
	defer syscall.Umask(syscall.Umask(0))
	if err := workspace.Init(o.Store, o.Root); err != nil {
		return err
	}
	logf, err := os.OpenFile(workspace.Layout(o.Store).DaemonLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open daemon log: %w", err)
	}
	defer logf.Close()
	log := slog.New(slog.NewJSONHandler(logf, nil)).With("pid", os.Getpid())

	tl, rep, err := index.OpenWriter(o.Store, index.WriterOptions{})
	if errors.Is(err, index.ErrLocked) {
		return workspace.Errorf(workspace.ErrBusy, "%s is already mounted (its store %s is locked): ckfs status shows where", o.Root, o.Store)
	}
	if err != nil {
		return err
	}
	defer tl.Close()
	if rep != nil {
		log.Warn("timeline repaired", "what", rep.String())
	}
	store, err := cas.Open(o.Store, nil)
	if err != nil {
		return err
	}
	history, tail, err := index.Load(workspace.Layout(o.Store).Timeline())
	if err != nil {
		return err
	}
	if tail != nil {
		return workspace.BadTimeline(o.Store, tail)
	}
	rootFd, err := workspace.OpenRoot(o.Root)
	if err != nil {
		return fmt.Errorf("open %s: %w", o.Root, err)
	}
	defer unix.Close(rootFd)
	rec, err := capture.New(capture.Options{
		Store: store, Timeline: tl, Source: capture.NewDirSource(rootFd),
		Excludes: o.Excludes, MaxFileSize: o.MaxFileSize, History: history, Logger: log,
		Procs: proc.System{},
	})
	if err != nil {
		return err
	}
	if done, err := rec.Reconcile(history); err != nil {
		return fmt.Errorf("finish what the previous daemon left open: %w", err)
	} else if len(done.Windows) > 0 || done.Paths > 0 {
		log.Warn("the previous daemon stopped without finishing; reconciled", "interrupted_windows", done.Windows, "post_images", done.Paths)
	}
	// Before anything is attributed to a window, the disk is checked
	// against the timeline: what changed while nothing was mounted is the
	// user's own change.
	if c, err := rec.CheckRecorded(); err != nil {
		return fmt.Errorf("check the recorded files against the disk: %w", err)
	} else if c.Found > 0 || c.Failed > 0 {
		log.Info("changes made while not mounted recorded as your own", "found", c.Found, "checked", c.Paths, "read", c.Read, "unreadable", c.Failed)
	}
	fsys, err := fusefs.New(rootFd, o.Root, rec)
	if err != nil {
		return err
	}
	// Every path the daemon opens by name is absolute, and what depends
	// on the environment is resolved now: once the mount serves from the
	// backing directory, the working directory is that directory.
	base, baseErr := workspace.Base()
	if o.OwnProcess {
		if err := fsys.ServeFromCwd(); err != nil {
			return err
		}
	}
	// The mount names its store as its source, so that every process can
	// tell which store serves a path (fusermount's option list cannot
	// carry commas; such a store is found by its registered link only).
	source := ""
	if !strings.ContainsAny(o.Store, ", \t\n\\") {
		source = workspace.SourcePrefix + o.Store
	}
	srv, err := fsys.Mount(o.Mountpoint, fusefs.Options{InPlace: o.Mountpoint == o.Root, AllowOther: o.AllowOther, Debug: o.Debug, Source: source, Cached: o.IO != config.IOPassthrough})
	if err != nil {
		return err
	}
	d := &daemon{o: o, log: log, rec: rec, tl: tl, srv: srv, fsys: fsys, store: store, rootFd: rootFd, stop: make(chan string, 4), sizeEvery: testhooks.SizeCheckEvery(), lastSizeCheck: time.Now()}
	d.up = d.startUploader()
	defer d.up.halt() // an early return stops it without pushing

	sock := workspace.SocketPath(o.Store)
	os.Remove(sock) // stale: we hold the store lock, so no daemon owns it
	addr, done, err := workspace.SockAddr(sock)
	if err != nil {
		srv.Unmount()
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	done()
	if ln != nil {
		// The listener would unlink the short name it was given, which
		// means nothing once its directory descriptor is closed: remove
		// the real path ourselves when it closes.
		ln.SetUnlinkOnClose(false)
	}
	if err != nil {
		srv.Unmount()
		return fmt.Errorf("control socket %s: %w", sock, err)
	}
	os.Chmod(sock, 0o600)
	var conns sync.WaitGroup
	go serveControl(ln, &conns, log, d.handle)

	st := workspace.DaemonState{PID: os.Getpid(), Root: o.Root, Mountpoint: o.Mountpoint, Socket: sock, Started: time.Now().UTC(), IO: fsys.Model()}
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := durable.WriteFile(workspace.Layout(o.Store).DaemonState(), append(b, '\n'), 0o600); err != nil {
		ln.Close()
		srv.Unmount()
		return err
	}
	// Every mount registers itself by its mountpoint, in place or not, so
	// that every later command finds the store that serves the path (a
	// --store given at mount included).
	link := ""
	{
		if baseErr == nil {
			link = workspace.MountLink(base, o.Mountpoint)
			os.MkdirAll(filepath.Dir(link), 0o700)
			os.Remove(link)
			os.Symlink(o.Store, link)
		}
	}
	log.Info("mounted", "root", o.Root, "mountpoint", o.Mountpoint)
	fmt.Fprintln(ready, "ok")
	d.up.poke() // what an earlier daemon recorded and did not push

	// Post-images are written without waiting for the disk; make them
	// durable in batches.
	syncDone := make(chan struct{})
	defer close(syncDone)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				rec.QueueQuiet()
				if err := rec.Sync(); err != nil && !errors.Is(err, capture.ErrClosed) {
					log.Error("periodic sync", "err", err)
				}
				if rec.StoreFullNow() && rec.RefillReserve() {
					log.Info("the store's disk has room again; its reserve is back")
				}
				d.maybeCollect(now)
			case <-syncDone:
				return
			}
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() { srv.Wait(); d.stop <- "the mount went away" }()
	var why string
	select {
	case s := <-sigs:
		why = "signal " + s.String()
	case why = <-d.stop:
	case <-ctx.Done():
		why = "context done"
	}
	log.Info("stopping", "why", why)
	fsys.CloseWriteFds()
	if err := rec.Close(); err != nil {
		log.Error("final flush", "err", err)
	}
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.up.close() // before collecting: the pushed seq bounds what may go
	d.collectAtStop(tl)
	if why != "unmounted" && why != "the mount went away" {
		unmountHard(srv, o.Mountpoint, log)
	}
	ln.Close()
	// Let the request that asked us to stop get its reply.
	waitTimeout(&conns, 2*time.Second)
	os.Remove(sock)
	os.Remove(workspace.Layout(o.Store).DaemonState())
	if link != "" {
		os.Remove(link)
	}
	log.Info("stopped")
	return nil
}

// unmountHard unmounts, lazily if the mount is busy, so a signalled daemon
// never leaves a dead mount behind.
func unmountHard(srv *fuse.Server, mnt string, log *slog.Logger) {
	if err := srv.Unmount(); err != nil {
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
	if req.Op == "open" || req.Op == "close" || req.Op == "flush" {
		// A boundary: no write descriptor is kept past it.
		defer d.fsys.CloseWriteFds()
	}
	switch req.Op {
	case "open":
		seq, err := d.rec.OpenAgentWindow(req.ID, req.Tool, req.Label, capture.Agent{PID: req.Agent, Command: req.Command, Marked: req.Marked})
		if err != nil {
			return workspace.Reply{Error: fmt.Sprintf("open window %q: %v", req.ID, err), Code: codeOf(err)}
		}
		return workspace.Reply{OK: true, Seq: seq, ID: req.ID}
	case "close":
		ids := d.rec.OpenWindows()
		if req.ID == "" && len(ids) > 0 {
			req.ID = ids[len(ids)-1]
		}
		seq, err := d.rec.CloseWindowReason(req.ID, req.Reason)
		if err != nil {
			return workspace.Reply{Error: fmt.Sprintf("close window %q: %v", req.ID, err), Code: codeOf(err)}
		}
		d.up.poke()
		return workspace.Reply{OK: true, Seq: seq, ID: req.ID}
	case "flush":
		if err := d.rec.Flush(); err != nil {
			return workspace.Reply{Error: err.Error()}
		}
		// The seq is the file timeline's checkpoint now (for marks).
		return workspace.Reply{OK: true, Seq: d.tl.LastSeq()}
	case "status":
		s := d.rec.Stats()
		return workspace.Reply{OK: true, Status: &workspace.StatusInfo{
			PID: os.Getpid(), Root: d.o.Root, Mountpoint: d.o.Mountpoint,
			OpenWindows: d.rec.OpenWindows(), Windows: s.Windows, Records: s.Records,
			ObjectsNew: s.ObjectsNew, BytesStored: s.BytesStored, Skipped: s.Skipped, Errors: s.CaptureError, Batched: s.Prefetched,
			StoreFull: s.StoreFull, StoreFullSince: s.StoreFullSince, StoreFullNow: d.rec.StoreFullNow(),
		}}
	case "rewind", "rollback", "abandon":
		return d.rewind(req)
	case "gc":
		if req.GC == nil {
			return workspace.Reply{Error: "gc request without parameters", Code: workspace.CodeUsage}
		}
		res, err := d.collect(req.GC.Policy, req.GC.DryRun)
		if err != nil {
			return workspace.Reply{Error: err.Error(), Code: codeOf(err)}
		}
		return workspace.Reply{OK: true, GC: res}
	case "unmount":
		if err := d.rec.Flush(); err != nil {
			d.log.Error("flush before unmount", "err", err)
		}
		if err := d.srv.Unmount(); err != nil {
			msg := fmt.Sprintf("unmount %s: %v", d.o.Mountpoint, err)
			if busy := workspace.BusyProcesses(d.o.Mountpoint); len(busy) > 0 {
				msg += "; in use by: " + strings.Join(busy, "; ")
			}
			return workspace.Reply{Error: msg, Code: workspace.CodeBusy}
		}
		d.stop <- "unmounted"
		return workspace.Reply{OK: true}
	}
	return workspace.Reply{Error: fmt.Sprintf("unknown op %q", req.Op), Code: workspace.CodeUsage}
}

func codeOf(err error) int {
	if errors.Is(err, capture.ErrNoWindow) || errors.Is(err, capture.ErrWindowOpen) {
		return workspace.CodeRefused
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
