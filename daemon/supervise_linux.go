package daemon

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Surviving the daemon. The process ckfs mount starts is a small
// supervisor: it starts the worker that mounts and serves, and the worker
// hands it a duplicate of the mount's /dev/fuse descriptor and of the
// backing directory's (and the kernel's INIT). While the supervisor holds
// them, the kernel keeps the connection when the worker dies: processes
// inside the mount wait instead of failing. The supervisor then starts a
// successor worker on the same connection (fusefs.Takeover): it
// reconciles what the dead worker left, reopens the windows that were
// open, finds the kernel's nodes again from the node journal, asks the
// kernel to resend what was unanswered, and serves on. A worker that
// exits cleanly (an unmount) ends the supervisor; one that could not hand
// the connection over (a kernel without FUSE_NOTIFY_RESEND, the
// passthrough model with its kernel handles) dies as before, with its
// mount: ckfs mount then detaches it and mounts again.

// Succession is what a worker gets from its supervisor.
type Succession struct {
	// Handoff is where the first worker sends the connection, once it
	// serves; nil for none.
	Handoff *os.File
	// FuseFd, RootFd and Init are a successor's: the live connection,
	// the backing directory, and the kernel's INIT. FuseFd < 0 for none.
	FuseFd, RootFd int
	Init           []byte
}

// Handing over: the first worker sends one message on the supervisor's
// socket pair, the two descriptors as SCM_RIGHTS and the INIT as data.
type handoff struct {
	fuseFd, rootFd int
	init           []byte
}

func sendHandoff(sock *os.File, fuseFd, rootFd int, init []byte) error {
	rights := unix.UnixRights(fuseFd, rootFd)
	return unix.Sendmsg(int(sock.Fd()), init, rights, nil, 0)
}

func recvHandoff(sock *os.File) (handoff, error) {
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(2*4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return handoff{}, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return handoff{}, fmt.Errorf("handoff: no descriptors (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		return handoff{}, fmt.Errorf("handoff: want 2 descriptors, got %d (%v)", len(fds), err)
	}
	return handoff{fuseFd: fds[0], rootFd: fds[1], init: buf[:n]}, nil
}

// maxFailedStarts is how many successors in a row may die before they
// serve before the supervisor gives up (one that cannot serve at all
// would otherwise be restarted forever). Deaths after serving are what
// the supervisor is for, and do not count.
const maxFailedStarts = 3

// successorStart bounds how long a successor may take to serve.
const successorStart = 30 * time.Second

// Supervise is the supervisor's body: it starts the worker with the
// ready descriptor ckfs mount reads, keeps what the worker hands it, and
// starts successors on the same connection while workers die. It returns
// when a worker exits cleanly, or dies without a successor.
func Supervise(exe string, o Options, readyFd int) error {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	mine, theirs := os.NewFile(uintptr(sp[0]), "handoff"), os.NewFile(uintptr(sp[1]), "handoff")
	var extra []*os.File
	args := []string{"--handoff-fd", "4"}
	if readyFd > 0 {
		extra = append(extra, os.NewFile(uintptr(readyFd), "ready"))
		args = append(args, "--ready-fd", "3")
	} else {
		extra = append(extra, nil)
	}
	cmd, err := startWorker(exe, o, append(extra, theirs), args)
	for _, f := range extra {
		if f != nil {
			f.Close()
		}
	}
	theirs.Close()
	if err != nil {
		return err
	}
	var h atomic.Pointer[handoff]
	go func() {
		if got, err := recvHandoff(mine); err == nil {
			h.Store(&got)
		}
		mine.Close()
	}()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	current := make(chan *exec.Cmd, 1)
	current <- cmd
	var upgrading atomic.Bool
	go forwardSignals(sigs, current, func() bool { return h.Load() != nil }, &upgrading)
	return supervise(exe, o, cmd, current, &h, &upgrading)
}

// supervise waits for workers to end, and starts a successor on the
// connection h holds for each that dies (or is retired by an upgrade).
func supervise(exe string, o Options, cmd *exec.Cmd, current chan *exec.Cmd, h *atomic.Pointer[handoff], upgrading *atomic.Bool) error {
	log := supervisorLog(o)
	failed := 0
	served := func() bool { return true } // the first worker handed over only once it served
	for {
		err := cmd.Wait()
		if err == nil {
			return nil
		}
		if h.Load() == nil {
			time.Sleep(100 * time.Millisecond) // a handoff sent just before the death
		}
		if h.Load() == nil || !workspace.MountedAt(o.Mountpoint) {
			return err // nothing to take over with: the mount goes with it
		}
		switch {
		case upgrading.Swap(false):
			log.Info("upgrade: a successor from the binary now at the path takes the mount over", "pid", cmd.Process.Pid, "exe", exe)
		case served():
			failed = 0
			log.Warn("the worker died; a successor takes the mount over", "pid", cmd.Process.Pid, "err", err.Error())
		default:
			if failed++; failed >= maxFailedStarts {
				log.Error("successors keep dying before they serve; giving the mount up", "failed", failed, "err", err)
				return err
			}
			log.Warn("the worker died; a successor takes the mount over", "pid", cmd.Process.Pid, "err", err.Error())
		}
		<-current
		cmd, served, err = startSuccessor(exe, o, *h.Load())
		if err != nil {
			log.Error("could not start a successor", "err", err)
			return err
		}
		current <- cmd
	}
}

// forwardSignals passes the supervisor's signals on to the worker that
// runs (unmount by signal, as before). SIGUSR1 is ckfs upgrade's: the
// worker is retired (killed, as a crash would: capture was flushed
// first) for a successor started from the binary now at the path, when
// the connection can be taken over.
func forwardSignals(sigs <-chan os.Signal, current chan *exec.Cmd, canTakeOver func() bool, upgrading *atomic.Bool) {
	for s := range sigs {
		cmd := <-current
		switch {
		case s != syscall.SIGUSR1:
			cmd.Process.Signal(s)
		case canTakeOver() && !upgrading.Load():
			upgrading.Store(true)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		current <- cmd
	}
}

// supervisorLog appends to the store's daemon log, opening it at each
// message (the first worker creates the store).
func supervisorLog(o Options) *slog.Logger {
	return slog.New(slog.NewJSONHandler(appendTo(workspace.Layout(o.Store).DaemonLog()), nil)).With("pid", os.Getpid(), "role", "supervisor")
}

// appendTo is a writer that appends each write to path.
type appendTo string

func (p appendTo) Write(b []byte) (int, error) {
	f, err := os.OpenFile(string(p), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Write(b)
}

// startWorker starts exe's worker for o with extra as its descriptors
// from 3 on, and args added.
func startWorker(exe string, o Options, extra []*os.File, args []string) (*exec.Cmd, error) {
	cmd := exec.Command(exe, append([]string{"daemon", "--worker", "--options", o.Arg()}, args...)...)
	cmd.ExtraFiles = extra
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the daemon's worker: %w", err)
	}
	return cmd, nil
}

// startSuccessor starts a worker that takes the connection of h over;
// served reports whether it has said it serves.
func startSuccessor(exe string, o Options, h handoff) (_ *exec.Cmd, served func() bool, err error) {
	// Duplicates: the supervisor keeps its own for the next successor.
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, fd := range []int{h.fuseFd, h.rootFd} {
		d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, os.NewFile(uintptr(d), "fd"))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	files = append(files, pw)
	cmd, err := startWorker(exe, o, files, []string{"--fuse-fd", "3", "--root-fd", "4", "--ready-fd", "5", "--init", hex.EncodeToString(h.init)})
	if err != nil {
		pr.Close()
		return nil, nil, err
	}
	var ok atomic.Bool
	// One that never says it serves (stuck) is stopped, and counts as
	// failed.
	time.AfterFunc(successorStart, func() {
		if !ok.Load() {
			cmd.Process.Kill()
		}
	})
	go func() {
		defer pr.Close()
		line, _ := bufio.NewReader(pr).ReadString('\n')
		rep, isReady := parseReady(strings.TrimSpace(line))
		ok.Store(isReady && rep == nil)
	}()
	return cmd, ok.Load, nil
}

// ParseSuccession reads a worker's command line into its Succession.
func ParseSuccession(handoffFd, fuseFd, rootFd int, init string) (Succession, error) {
	s := Succession{FuseFd: -1, RootFd: -1}
	if handoffFd > 0 {
		s.Handoff = os.NewFile(uintptr(handoffFd), "handoff")
	}
	if fuseFd > 0 {
		b, err := hex.DecodeString(init)
		if err != nil || rootFd <= 0 {
			return s, errors.New("daemon: a successor needs --fuse-fd, --root-fd and --init")
		}
		s.FuseFd, s.RootFd, s.Init = fuseFd, rootFd, b
	}
	return s, nil
}

// handOff gives the supervisor the mount's connection, when the mount
// can be taken over: handleless (no kernel handle a successor could not
// know) and a kernel that resends what was unanswered.
func (d *daemon) handOff() {
	if d.succ.Handoff == nil {
		return
	}
	defer d.succ.Handoff.Close()
	if why := d.fsys.TakeoverBlocker(d.srv); why != "" {
		d.log.Info("the mount cannot outlive this daemon", "why", why)
		return
	}
	fd, err := fusefs.FuseFd()
	if err == nil {
		err = sendHandoff(d.succ.Handoff, fd, d.rootFd, fusefs.InitBytes(d.srv))
	}
	if err != nil {
		d.log.Warn("could not hand the connection to the supervisor: the mount ends with this daemon", "err", err)
		return
	}
	d.handedOff = true
	if err := d.writeState(); err != nil {
		d.log.Warn("could not name the supervisor in daemon.json", "err", err)
	}
	d.log.Info("handed the connection to the supervisor", "supervisor", strconv.Itoa(os.Getppid()))
}

// takeOver serves the connection the supervisor gave this successor.
func (d *daemon) takeOver(fsys *fusefs.FS, fo fusefs.Options) (*fuse.Server, error) {
	srv, st, err := fsys.Takeover(d.succ.FuseFd, d.succ.Init, d.nodes, fo)
	d.nodes = nil
	if err != nil {
		return nil, err
	}
	d.log.Info("found the kernel's nodes again", "nodes", st.Nodes, "stale", st.Stale)
	return srv, nil
}
