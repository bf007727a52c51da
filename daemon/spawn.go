package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/workspace"
)

// ReportedError is the error a daemon reported before it served.
type ReportedError struct {
	Msg  string
	Busy bool // the workspace is mounted already
}

func (e *ReportedError) Error() string { return e.Msg }

// Spawn starts exe's daemon command for o in its own session, and returns
// its pid once it serves. A store it created that never served is removed
// when the daemon fails, so no later command resolves a path to it.
func Spawn(exe string, o Options) (int, error) {
	_, serr := os.Stat(o.Store)
	fresh := errors.Is(serr, fs.ErrNotExist)
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	args := []string{"daemon", "--ready-fd", "3", "--options", o.Arg()}
	cmd := exec.Command(exe, args...)
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return 0, fmt.Errorf("start daemon: %w", err)
	}
	pw.Close()
	defer pr.Close()
	line, rerr := bufio.NewReader(pr).ReadString('\n')
	line = strings.TrimSpace(line)
	rep, isReady := parseReady(line)
	if isReady && rep == nil {
		pid := cmd.Process.Pid
		cmd.Process.Release()
		return pid, nil
	}
	// The daemon failed before serving: reap it, forget it, and report why.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	logHint := fmt.Sprintf("; see %s/daemon.log", o.Store)
	if st, err := workspace.ReadDaemonState(o.Store); err == nil && st.PID == cmd.Process.Pid {
		os.Remove(workspace.Layout(o.Store).DaemonState())
	}
	if fresh {
		os.RemoveAll(o.Store)
		logHint = ""
	}
	if rep != nil {
		return 0, rep
	}
	return 0, fmt.Errorf("mount %s: the daemon exited without serving (%v)%s", o.Root, rerr, logHint)
}

// Arg is the options as the daemon process gets them from Spawn: one
// JSON argument, written by Arg and read by ParseOptions only, so the
// parent and the daemon cannot disagree about a flag.
func (o Options) Arg() string {
	b, _ := json.Marshal(o)
	return string(b)
}

// ParseOptions reads the argument Arg wrote; a field it does not know, or
// anything but one JSON object, is an error.
func ParseOptions(arg string) (Options, error) {
	var o Options
	dec := json.NewDecoder(strings.NewReader(arg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return Options{}, fmt.Errorf("daemon options: %w", err)
	}
	if dec.More() {
		return Options{}, fmt.Errorf("daemon options: more than one JSON value")
	}
	if !filepath.IsAbs(o.Root) || !filepath.IsAbs(o.Mountpoint) || !filepath.IsAbs(o.Store) {
		return Options{}, fmt.Errorf("daemon options: root, mountpoint and store must be absolute paths")
	}
	return o, nil
}
