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

// Run mounts and serves until it is told to unmount, is signalled, or
// the mount goes away: open, then serve, then stop. It reports on ready
// one line, as readyReport writes it, once the mount serves or could not.
func Run(ctx context.Context, o Options, ready io.Writer) error {
	return RunWorker(ctx, o, ready, Succession{FuseFd: -1, RootFd: -1})
}

// RunWorker is Run for a worker of a supervisor (Supervise): the first
// hands it the connection once it serves, a successor serves the
// connection it is given.
func RunWorker(ctx context.Context, o Options, ready io.Writer, succ Succession) error {
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
	d, err := open(o, succ)
	fmt.Fprintln(ready, readyReport(err))
	if err != nil {
		return err
	}
	trimBinaryPages() // what starting ran stays mapped otherwise
	d.stopServing(d.serve(ctx))
	return nil
}

// open does everything a mount needs before it serves: the store, the
// timeline and its lock, capture (finishing what an earlier daemon left,
// checking the disk against the timeline), the mount, the control socket,
// the daemon's state file and the link that finds the store from the
// mountpoint. What it acquired is on d.undo; if it fails, it releases all
// of it.
func open(o Options, succ Succession) (_ *daemon, err error) {
	d := &daemon{o: o, stop: make(chan string, 4), sizeEvery: testhooks.SizeCheckEvery(), lastSizeCheck: time.Now(), succ: succ, tookOver: succ.FuseFd >= 0}
	defer func() {
		if err != nil {
			d.undo.run()
		}
	}()
	// A successor touches no path under the mountpoint: the mount it is
	// taking over answers nothing until it serves. The store exists.
	if !d.tookOver {
		if err := workspace.Init(o.Store, o.Root); err != nil {
			return nil, err
		}
	}
	if d.meta, err = workspace.ReadMeta(o.Store); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(workspace.Layout(o.Store).DaemonLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open daemon log: %w", err)
	}
	d.undo.push(func() { logf.Close() })
	d.log = slog.New(slog.NewJSONHandler(logf, nil)).With("pid", os.Getpid())
	if err := d.openCapture(); err != nil {
		return nil, err
	}
	if err := d.mount(); err != nil {
		return nil, err
	}
	d.up = d.startUploader()
	d.undo.push(d.up.halt) // a stop before close stops it without pushing
	if err := d.listen(); err != nil {
		return nil, err
	}
	if err := d.register(); err != nil {
		return nil, err
	}
	if !d.tookOver {
		// Last: a supervisor given the connection starts successors.
		d.handOff()
	}
	if d.tookOver {
		d.log.Info("took the mount over", "root", o.Root, "mountpoint", o.Mountpoint)
	} else {
		d.log.Info("mounted", "root", o.Root, "mountpoint", o.Mountpoint)
	}
	return d, nil
}

// openCapture opens the timeline (taking the store's lock), the object
// store and the recorder, finishes what an earlier daemon left open, and
// checks the disk against the timeline.
func (d *daemon) openCapture() error {
	o := d.o
	tl, rep, err := index.OpenWriter(o.Store, index.WriterOptions{})
	if errors.Is(err, index.ErrLocked) {
		return workspace.Errorf(workspace.ErrBusy, "%s is already mounted (its store %s is locked): ckfs status shows where", o.Root, o.Store)
	}
	if err != nil {
		return err
	}
	d.tl = tl
	d.undo.push(func() { tl.Close() })
	if rep != nil {
		d.log.Warn("timeline repaired", "what", rep.String())
	}
	if d.store, err = cas.Open(o.Store, nil); err != nil {
		return err
	}
	history, tail, err := index.Load(workspace.Layout(o.Store).Timeline())
	if err != nil {
		return err
	}
	if tail != nil {
		return workspace.BadTimeline(o.Store, tail)
	}
	rootFd := d.succ.RootFd
	if !d.tookOver {
		// A successor is given the directory: its path is the mount.
		if rootFd, err = workspace.OpenRoot(o.Root); err != nil {
			return fmt.Errorf("open %s: %w", o.Root, err)
		}
	}
	d.rootFd = rootFd
	d.undo.push(func() { unix.Close(rootFd) })
	d.rec, err = capture.New(capture.Options{
		Store: d.store, Timeline: tl, Source: capture.NewDirSource(rootFd),
		Excludes: o.Excludes, MaxFileSize: o.MaxFileSize, History: history, Logger: d.log,
		Procs: proc.System{},
	})
	if err != nil {
		return err
	}
	known, err := readOpenWindows(o.Store)
	if err != nil {
		d.log.Warn(err.Error())
	}
	done, err := d.rec.Reconcile(history)
	if err != nil {
		return fmt.Errorf("finish what the previous daemon left open: %w", err)
	} else if len(done.Windows) > 0 || done.Paths > 0 {
		d.log.Warn("the previous daemon stopped without finishing; reconciled", "interrupted_windows", done.Windows, "post_images", done.Paths)
	}
	if d.tookOver {
		// The calls the dead daemon had open go on: their windows, closed
		// as interrupted, open again under the same ids and agents. The
		// mount never went away, so nothing changed behind it: the disk
		// needs no check against the timeline.
		return d.reopenWindows(done.Windows, known, history)
	}
	// Before anything is attributed to a window, the disk is checked
	// against the timeline: what changed while nothing was mounted is the
	// user's own change.
	if c, err := d.rec.CheckRecorded(); err != nil {
		return fmt.Errorf("check the recorded files against the disk: %w", err)
	} else if c.Found > 0 || c.Failed > 0 {
		d.log.Info("changes made while not mounted recorded as your own", "found", c.Found, "checked", c.Paths, "read", c.Read, "unreadable", c.Failed)
	}
	return nil
}

// mount serves the passthrough at the mountpoint, or, for a successor,
// on the connection it was given.
func (d *daemon) mount() error {
	o := d.o
	fsys, err := fusefs.New(d.rootFd, o.Root, d.rec)
	if err != nil {
		return err
	}
	if err := d.keepNodeJournal(fsys); err != nil {
		return err
	}
	if o.OwnProcess {
		// Once the mount serves from the backing directory, the working
		// directory is that directory.
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
	fo := fusefs.Options{InPlace: o.Mountpoint == o.Root, AllowOther: o.AllowOther, Debug: o.Debug, Source: source, Cached: o.IO != config.IOPassthrough, AfterDirOp: testhooks.AfterDirOp(),
		OnMappedWrite: func() { os.WriteFile(workspace.Layout(o.Store).MappedWrites(), nil, 0o600) }}
	var srv *fuse.Server
	if d.tookOver {
		srv, err = d.takeOver(fsys, fo)
	} else {
		srv, err = fsys.Mount(o.Mountpoint, fo)
	}
	if err != nil {
		return err
	}
	d.fsys, d.srv = fsys, srv
	d.undo.push(func() {
		if !d.unmounted {
			srv.Unmount()
		}
	})
	return nil
}

// listen opens the control socket and serves it.
func (d *daemon) listen() error {
	sock := workspace.SocketPath(d.o.Store)
	os.Remove(sock) // stale: we hold the store lock, so no daemon owns it
	addr, done, err := workspace.SockAddr(sock)
	if err != nil {
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	done()
	if err != nil {
		return fmt.Errorf("control socket %s: %w", sock, err)
	}
	// The listener would unlink the short name it was given, which means
	// nothing once its directory descriptor is closed: remove the real
	// path ourselves when it closes.
	ln.SetUnlinkOnClose(false)
	os.Chmod(sock, 0o600)
	d.ln = ln
	d.undo.push(func() {
		ln.Close()
		// Let the request that asked us to stop get its reply.
		waitTimeout(&d.conns, 2*time.Second)
		os.Remove(sock)
	})
	go serveControl(ln, &d.conns, d.log, d.handle)
	return nil
}

// register writes the daemon's state file, and links the mountpoint to the
// store, so that every later command finds the store that serves a path
// (a --store given at mount included), in place or not.
func (d *daemon) register() error {
	o := d.o
	if err := d.writeState(); err != nil {
		return err
	}
	state := workspace.Layout(o.Store).DaemonState()
	d.undo.push(func() { os.Remove(state) })
	base, err := workspace.Base()
	if err != nil {
		return nil // no directory of stores: found by --store only
	}
	link := workspace.MountLink(base, o.Mountpoint)
	os.MkdirAll(filepath.Dir(link), 0o700)
	os.Remove(link)
	os.Symlink(o.Store, link)
	d.undo.push(func() { os.Remove(link) })
	return nil
}

// writeState writes the daemon's state file, daemon.json.
func (d *daemon) writeState() error {
	o := d.o
	st := workspace.DaemonState{PID: os.Getpid(), Root: o.Root, Mountpoint: o.Mountpoint, Socket: workspace.SocketPath(o.Store), Started: time.Now().UTC(), IO: d.fsys.Model()}
	if d.handedOff || d.tookOver {
		st.Supervisor = os.Getppid()
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	return durable.WriteFile(workspace.Layout(o.Store).DaemonState(), append(b, '\n'), 0o600)
}

// serve runs until the daemon is told to stop, and says why it stops.
func (d *daemon) serve(ctx context.Context) string {
	d.up.poke() // what an earlier daemon recorded and did not push
	// Post-images are written without waiting for the disk; make them
	// durable in batches.
	tickDone := make(chan struct{})
	defer close(tickDone)
	go d.tick(tickDone)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() { d.srv.Wait(); d.stop <- "the mount went away" }()
	select {
	case s := <-sigs:
		return "signal " + s.String()
	case why := <-d.stop:
		return why
	case <-ctx.Done():
		return "context done"
	}
}

// tick does the daemon's work of every second until done is closed: the
// windows of agents that exited, post-images of paths left alone, their
// syncs, the store's reserve, and automatic collection.
func (d *daemon) tick(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			d.closeOrphanedWindows()
			d.rec.QueueQuiet()
			if err := d.rec.Sync(); err != nil && !errors.Is(err, capture.ErrClosed) {
				d.log.Error("periodic sync", "err", err)
			}
			if d.rec.StoreFullNow() && d.rec.RefillReserve() {
				d.log.Info("the store's disk has room again; its reserve is back")
			}
			d.maybeCollect(now)
		case <-done:
			return
		}
	}
}

// stopServing finishes capture (every open window closed, every
// post-image taken), pushes and collects what is due, unmounts, and
// releases what open acquired.
func (d *daemon) stopServing(why string) {
	d.log.Info("stopping", "why", why)
	d.fsys.CloseWriteFds()
	if err := d.rec.Close(); err != nil {
		d.log.Error("final flush", "err", err)
	}
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.up.close() // before collecting: the pushed seq bounds what may go
	d.collectAtStop(d.tl)
	if why != "unmounted" && why != "the mount went away" {
		d.unmountHard()
	}
	d.unmounted = true
	log := d.log
	d.undo.run()
	log.Info("stopped")
}

// Readiness: a daemon reports one line on its ready stream, "ok" once it
// serves, or "error CODE: MESSAGE" when it could not, CODE one of these.
const (
	readyBusy   = "busy"   // the workspace is mounted already
	readyFailed = "failed" // anything else
)

// readyReport is the line a daemon that opened with err reports.
func readyReport(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, workspace.ErrBusy):
		return "error " + readyBusy + ": " + oneLine(err.Error())
	default:
		return "error " + readyFailed + ": " + oneLine(err.Error())
	}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// parseReady reads a ready line: nil once the daemon serves, else what it
// reported (nil, false for a line that is no ready line).
func parseReady(line string) (rep *ReportedError, ok bool) {
	if line == "ok" {
		return nil, true
	}
	rest, found := strings.CutPrefix(line, "error ")
	if !found {
		return nil, false
	}
	code, msg, found := strings.Cut(rest, ": ")
	if !found || (code != readyBusy && code != readyFailed) {
		return nil, false
	}
	return &ReportedError{Msg: msg, Busy: code == readyBusy}, true
}
