// Package integration drives the real ckfs binary on real mounts with real
// tools: sh, sed, perl, python3, cp, mv, git, tar.
package integration

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// ckfsBin is the binary under test, built once by TestMain.
var ckfsBin string

func TestMain(m *testing.M) {
	if os.Getenv(peakHelperEnv) == "1" {
		peakHelper() // never returns
	}
	// CKFS_RAPID_CHECKS sets how many cases each property test tries
	// (rapid's -rapid.checks, 100 by default): the race-enabled run of
	// every package tries a few, the stress suite many, without the race
	// detector (which makes each case through a mount five times slower).
	flag.Parse()
	if n := os.Getenv("CKFS_RAPID_CHECKS"); n != "" {
		if err := flag.Set("rapid.checks", n); err != nil {
			panic("CKFS_RAPID_CHECKS=" + n + ": " + err.Error())
		}
	}
	// The daemons the tests start are orphaned when ckfs mount returns:
	// adopt them, so that they are reaped here rather than left as zombies.
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	dir, err := os.MkdirTemp("", "ckfs-bin-")
	if err != nil {
		panic(err)
	}
	ckfsBin = filepath.Join(dir, "ckfs")
	// The binary is built without the race detector: these tests spawn
	// it hundreds of times, and the packages it runs are race-tested
	// in-process by their own tests. CKFS_RACE=1 builds it with -race.
	build := exec.Command("go", "build", "-o", ckfsBin, "../cmd/ckfs")
	if os.Getenv("CKFS_RACE") == "1" {
		build = exec.Command("go", "build", "-race", "-o", ckfsBin, "../cmd/ckfs")
	}
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		panic("build ckfs: " + err.Error())
	}
	// The hook executable beside it: the agents' hooks run it, as an
	// installation's would.
	hook := exec.Command("go", "build", "-o", filepath.Join(dir, "ckfs-hook"), "../cmd/ckfs-hook")
	hook.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as the README builds it
	hook.Stdout, hook.Stderr = os.Stdout, os.Stderr
	if err := hook.Run(); err != nil {
		panic("build ckfs-hook: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// workspace is a repository mounted in place by the real binary.
type workspace struct {
	t     *testing.T
	root  string
	home  string // CKFS_HOME
	store string
	pid   int
	sup   int // the daemon's supervisor, 0 for none
	// config is the configuration file (CKFS_CONFIG); it does not exist
	// unless a test writes it.
	config string
	// extraEnv is added to the environment of every command, the daemon
	// included.
	extraEnv []string
	// behindFd is the workspace's directory as opened before its first
	// mount: a way beneath the mount (behindDir).
	behindFd *os.File
}

// mountWorkspace creates a repository with setup run natively (before the
// mount, so it is the baseline), mounts it in place, and unmounts it when
// the test ends, failing if the mount or the daemon is left behind.
func mountWorkspace(t *testing.T, setup string, extra ...string) *workspace {
	t.Helper()
	w := newWorkspace(t, setup)
	w.mount(extra...)
	return w
}

// newWorkspace creates the repository without mounting it.
func newWorkspace(t *testing.T, setup string) *workspace {
	t.Helper()
	testenv.RequireFUSE(t)
	base := t.TempDir()
	w := &workspace{t: t, root: filepath.Join(base, "repo"), home: filepath.Join(base, "home"), config: filepath.Join(base, "config.toml")}
	if err := os.Mkdir(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if setup != "" {
		w.shIn(w.root, setup)
	}
	return w
}

// mount mounts the workspace in place and unmounts it when the test ends.
func (w *workspace) mount(extra ...string) {
	t := w.t
	t.Helper()
	if w.behindFd == nil {
		f, err := os.Open(w.root)
		if err != nil {
			t.Fatal(err)
		}
		w.behindFd = f
		t.Cleanup(func() { f.Close() })
	}
	out := w.ckfs(append([]string{"mount", w.root}, extra...)...)
	if !strings.Contains(out, "mounted") {
		t.Fatalf("mount: %s", out)
	}
	st := w.status()
	if st.State != "mounted" || st.Daemon == nil {
		t.Fatalf("status after mount: %+v", st)
	}
	w.store, w.pid = st.Store, st.Daemon.PID
	w.sup = daemonState(t, w).Supervisor
	t.Cleanup(w.unmount)
}

// refreshPids reads the daemon's and its supervisor's pids again (after
// a mount made outside w.mount).
func (w *workspace) refreshPids() {
	st := w.status()
	w.store = st.Store
	if st.Daemon != nil {
		w.pid = st.Daemon.PID
	}
	w.sup = daemonState(w.t, w).Supervisor
}

// killHard kills the daemon's supervisor, then the daemon (SIGKILL): the
// mount dies with them, as on a machine where no successor can take it
// over.
func (w *workspace) killHard() {
	if w.sup > 0 {
		syscall.Kill(w.sup, syscall.SIGKILL)
		for i := 0; i < 500 && alive(w.sup); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		reap(w.sup)
	}
	syscall.Kill(w.pid, syscall.SIGKILL)
}

func (w *workspace) env() []string {
	env := append(os.Environ(), w.extraEnv...)
	return append(env, "CKFS_HOME="+w.home, "CKFS_CONFIG="+w.config, "NO_COLOR=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

// ckfs runs the binary in the workspace and fails the test on error.
func (w *workspace) ckfs(args ...string) string {
	w.t.Helper()
	out, err := w.ckfsErr(args...)
	if err != nil {
		w.t.Fatalf("ckfs %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (w *workspace) ckfsErr(args ...string) (string, error) {
	c := exec.Command(ckfsBin, args...)
	c.Dir = w.root
	if args[0] == "mount" || args[0] == "unmount" {
		c.Dir = filepath.Dir(w.root) // the mount may be dead
	}
	c.Env = w.env()
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.String(), err
}

// sh runs a shell script in the workspace, through the mount.
func (w *workspace) sh(script string) string {
	w.t.Helper()
	return w.shIn(w.root, script)
}

func (w *workspace) shIn(dir, script string) string {
	w.t.Helper()
	c := exec.Command("sh", "-ec", script)
	c.Dir = dir
	c.Env = w.env()
	out, err := c.CombinedOutput()
	if err != nil {
		w.t.Fatalf("sh %q: %v\n%s", script, err, out)
	}
	return string(out)
}

type status struct {
	State  string `json:"state"`
	Store  string `json:"store"`
	Daemon *struct {
		PID         int      `json:"pid"`
		OpenWindows []string `json:"open_windows"`
	} `json:"daemon"`
}

func (w *workspace) status() status {
	w.t.Helper()
	out := w.ckfs("status", "--json")
	var st status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

func (w *workspace) mounted() bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	return bytes.Contains(b, []byte(" "+w.root+" "))
}

func (w *workspace) unmount() {
	if !w.mounted() {
		return
	}
	out, err := w.ckfsErr("unmount", w.root)
	if err != nil {
		w.t.Errorf("unmount: %v\n%s", err, out)
	}
	if w.mounted() {
		w.t.Errorf("%s is still mounted after unmount", w.root)
		exec.Command("umount", "-l", w.root).Run()
	}
	for i := 0; i < 100 && alive(w.pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(w.pid) {
		w.t.Errorf("daemon pid %d still running after unmount", w.pid)
		syscall.Kill(w.pid, syscall.SIGKILL)
	}
	reap(w.pid)
	// The supervisor ends with its daemon.
	for i := 0; i < 100 && w.sup > 0 && alive(w.sup); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if w.sup > 0 && alive(w.sup) {
		w.t.Errorf("supervisor pid %d still running after unmount", w.sup)
		syscall.Kill(w.sup, syscall.SIGKILL)
	}
	reap(w.sup)
}

// window runs script inside a window with the given id.
func (w *workspace) window(id, script string) {
	w.t.Helper()
	w.ckfs("window", "open", "--id", id, "--tool", "Bash", "--label", script)
	w.sh(script)
	w.ckfs("window", "close", "--id", id)
}

func (w *workspace) records() []index.Record {
	w.t.Helper()
	if w.mounted() {
		w.ckfs("flush")
	}
	recs, tail, err := index.Load(filepath.Join(w.store, index.TimelineFile))
	if err != nil || tail != nil {
		w.t.Fatalf("timeline: %v %v", err, tail)
	}
	return recs
}

func (w *workspace) windowByID(recs []index.Record, id string) index.Window {
	w.t.Helper()
	for _, win := range index.Windows(recs) {
		if win.ID == id {
			if win.Close == nil {
				w.t.Fatalf("window %s is still open", id)
			}
			return win
		}
	}
	w.t.Fatalf("no window %s", id)
	return index.Window{}
}

// content returns what a state holds, in a form tests can compare:
// file bytes, "<absent>", "<dir>", or "<symlink:target>", with " mode=NNN"
// appended when the mode is not the usual one for the type.
func (w *workspace) content(s index.Entry) string {
	w.t.Helper()
	var c string
	switch s.Type {
	case index.TypeAbsent:
		return "<absent>"
	case index.TypeDir:
		c = "<dir>"
	case index.TypeFile, index.TypeSymlink:
		if s.Unknown {
			c = "<skipped>"
			break
		}
		h, err := cas.ParseHash(string(s.Hash))
		if err != nil {
			w.t.Fatal(err)
		}
		st, err := cas.Open(w.store, nil)
		if err != nil {
			w.t.Fatal(err)
		}
		b, err := st.Get(h)
		if err != nil {
			w.t.Fatalf("object %s: %v", h, err)
		}
		c = string(b)
		if s.Type == index.TypeSymlink {
			return "<symlink:" + c + ">"
		}
	}
	usual := map[index.FileType]uint32{index.TypeFile: 0o644, index.TypeDir: 0o755}[s.Type]
	if s.Mode != usual {
		c += fmt.Sprintf(" mode=%o", s.Mode)
	}
	return c
}

// changes returns, for window id, every path whose state differs between
// the window's open and close boundaries, as path -> [before, after].
func (w *workspace) changes(id string) map[string][2]string {
	w.t.Helper()
	recs := w.records()
	win := w.windowByID(recs, id)
	before, after := index.StateAt(recs, win.Open.Seq), index.StateAt(recs, win.Close.Seq)
	out := map[string][2]string{}
	for _, p := range win.Paths {
		b, a := w.content(before[p]), w.content(after[p])
		if b != a {
			out[p] = [2]string{b, a}
		}
	}
	return out
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// reap collects the daemon pid once it has exited (the test process is
// the daemons' subreaper). Only that pid: waiting for any child would take
// the exit status of a command another test runs in parallel, whose own
// Wait then fails with ECHILD.
func reap(pid int) {
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, unix.WNOHANG, nil)
}
