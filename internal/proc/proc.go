// Package proc reads what the kernel says about a process: its thread
// group, its parent, its command line. ckfs uses it to tell which tool call
// a write came from when several run at once, and to find the agent that
// runs a hook. Everything it returns can be stale by the time it is used
// (processes exit, pids are reused); callers treat it as a hint.
package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrUnsupported is returned where the system has no /proc.
var ErrUnsupported = errors.New("process information is not available on this system")

// Table answers questions about processes; System reads the real ones.
type Table interface {
	// Parent returns the thread group (process) id of pid and its
	// parent's: pid may be a thread id, as FUSE reports it.
	Parent(pid int) (tgid, ppid int, err error)
	// Cmdline returns the command line, arguments joined by spaces.
	Cmdline(pid int) (string, error)
}

// System is the Table of this machine.
type System struct{ Root string } // Root is /proc when empty

func (s System) root() string {
	if s.Root == "" {
		return "/proc"
	}
	return s.Root
}

// Parent reads Tgid and PPid from /proc/PID/status.
func (s System) Parent(pid int) (tgid, ppid int, err error) {
	b, err := os.ReadFile(filepath.Join(s.root(), strconv.Itoa(pid), "status"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(s.root()); serr != nil {
				return 0, 0, ErrUnsupported
			}
		}
		return 0, 0, err
	}
	return parseStatus(b)
}

// parseStatus reads the Tgid and PPid lines of a status file.
func parseStatus(b []byte) (tgid, ppid int, err error) {
	tgid, ppid = -1, -1
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int
		switch string(k) {
		case "Tgid":
			dst = &tgid
		case "PPid":
			dst = &ppid
		default:
			continue
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		if err != nil || n < 0 {
			return 0, 0, errors.New("status: bad " + string(k) + " line")
		}
		*dst = n
	}
	if tgid < 0 || ppid < 0 {
		return 0, 0, errors.New("status: no Tgid or PPid line")
	}
	return tgid, ppid, nil
}

// Cmdline reads /proc/PID/cmdline.
func (s System) Cmdline(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.root(), strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))), nil
}

// EnvReader is a Table that can also read a process's environment.
type EnvReader interface {
	// Env returns the value of key in pid's environment as it was when
	// the process started; false when it is not set or cannot be read.
	Env(pid int, key string) (string, bool)
}

// Env reads key from /proc/PID/environ.
func (s System) Env(pid int, key string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(s.root(), strconv.Itoa(pid), "environ"))
	if err != nil {
		return "", false
	}
	return envValue(b, key)
}

// envValue finds key in an environ file (NUL-separated KEY=VALUE).
func envValue(b []byte, key string) (string, bool) {
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if k, v, ok := bytes.Cut(kv, []byte("=")); ok && string(k) == key {
			return string(v), true
		}
	}
	return "", false
}

// Ancestry returns pid's process and its ancestors, nearest first, ending
// before pid 1 (or where the table stops answering). At most 64 entries.
func Ancestry(t Table, pid int) []int {
	var chain []int
	for pid > 1 && len(chain) < 64 {
		tgid, ppid, err := t.Parent(pid)
		if err != nil {
			break
		}
		chain = append(chain, tgid)
		if ppid == tgid {
			break
		}
		pid = ppid
	}
	return chain
}

// shells are the programs that only pass a hook command on.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true, "busybox": true, "env": true}

// Agent returns the process that runs a hook started as pid's parent: the
// nearest ancestor that is not a shell (agents start hooks through
// `sh -c`). 0 when it cannot be told.
func Agent(t Table, parent int) int {
	for _, p := range Ancestry(t, parent) {
		cmd, err := t.Cmdline(p)
		if err != nil {
			return 0
		}
		if !shells[program(cmd)] {
			return p
		}
	}
	return 0
}

// program is the base name of a command line's first word.
func program(cmdline string) string {
	first, _, _ := strings.Cut(cmdline, " ")
	return filepath.Base(first)
}

// Exited reports whether pid is known to have exited: there is no such
// process, or it is a zombie waiting to be reaped. A process that exists
// but may not be signalled (another user's), or whose state cannot be
// read, has not.
func Exited(pid int) bool {
	if pid <= 0 {
		return false
	}
	killErr := syscall.Kill(pid, 0)
	if errors.Is(killErr, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return exited(killErr, b, err, func() bool { _, err := os.Stat("/proc/self"); return err == nil })
}

// exited decides from what the signal check and /proc/PID/stat said. A
// zombie can be reaped between the two looks: its stat is then gone (or
// its read fails with ESRCH) while the system has a /proc, and it has
// exited (answering "running" there made ckfs unmount report a daemon that
// had just exited as still alive).
func exited(killErr error, stat []byte, statErr error, haveProc func() bool) bool {
	if errors.Is(killErr, syscall.ESRCH) {
		return true
	}
	if statErr != nil {
		// Gone from /proc, or going: a read of a process being
		// released fails with ESRCH.
		return (errors.Is(statErr, os.ErrNotExist) || errors.Is(statErr, syscall.ESRCH)) && haveProc()
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z' || stat[i+2] == 'X'
	}
	return false
}
