package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fake is a process table: pid -> {tgid, ppid, cmdline}.
type fake map[int]struct {
	tgid, ppid int
	cmd        string
}

func (f fake) Parent(pid int) (int, int, error) {
	p, ok := f[pid]
	if !ok {
		return 0, 0, errors.New("no such process")
	}
	return p.tgid, p.ppid, nil
}

func (f fake) Cmdline(pid int) (string, error) {
	p, ok := f[pid]
	if !ok {
		return "", errors.New("no such process")
	}
	return p.cmd, nil
}

func TestAncestryAndAgent(t *testing.T) {
	procs := fake{
		10: {10, 1, "/usr/bin/node /usr/lib/claude --settings x"},
		20: {20, 10, "/bin/sh -c ckfs hook claude"},
		21: {20, 10, ""}, // a thread of 20
		30: {30, 20, "bash -c x"},
	}
	if got, want := Ancestry(procs, 30), []int{30, 20, 10}; !cmp.Equal(got, want) {
		t.Errorf("Ancestry(30) = %v, want %v", got, want)
	}
	if got, want := Ancestry(procs, 21), []int{20, 10}; !cmp.Equal(got, want) {
		t.Errorf("Ancestry of a thread = %v, want %v", got, want)
	}
	if got := Agent(procs, 30); got != 10 {
		t.Errorf("Agent through two shells = %d, want 10", got)
	}
	if got := Agent(procs, 99); got != 0 {
		t.Errorf("Agent of an unknown process = %d, want 0", got)
	}
}

func TestSystemSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	tgid, ppid, err := System{}.Parent(os.Getpid())
	if err != nil || tgid != os.Getpid() || ppid != os.Getppid() {
		t.Fatalf("Parent(self) = %d, %d, %v; want %d, %d", tgid, ppid, err, os.Getpid(), os.Getppid())
	}
	if cmd, err := (System{}).Cmdline(os.Getpid()); err != nil || cmd == "" {
		t.Fatalf("Cmdline(self) = %q, %v", cmd, err)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tbash\nTgid:\t30\nPid:\t30\nPPid:\t20\n"))
	f.Add([]byte("Tgid: -1\nPPid: x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tgid, ppid, err := parseStatus(b)
		if err == nil && (tgid < 0 || ppid < 0) {
			t.Fatalf("negative ids without an error: %d %d", tgid, ppid)
		}
	})
}

// A process that runs has not exited; once killed it has, both while a
// zombie waits for its parent and once reaped.
func TestExited(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := c.Process.Pid
	if Exited(pid) || Exited(os.Getpid()) {
		t.Fatal("a running process counts as exited")
	}
	c.Process.Kill()
	for deadline := time.Now().Add(10 * time.Second); !Exited(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a killed process, not yet reaped, does not count as exited")
		}
	}
	c.Wait()
	if !Exited(pid) {
		t.Error("a reaped process does not count as exited")
	}
	if Exited(0) || Exited(-1) {
		t.Error("no pid counts as exited")
	}
}

// A zombie reaped between the signal check and the read of its state is
// gone from /proc: it has exited. Only where there is no /proc at all does
// a missing state say nothing.
func TestExitedWhenReapedBetweenLooks(t *testing.T) {
	gone := &os.PathError{Op: "open", Path: "/proc/42/stat", Err: syscall.ENOENT}
	yes, no := func() bool { return true }, func() bool { return false }
	cases := []struct {
		name    string
		killErr error
		stat    []byte
		statErr error
		proc    func() bool
		want    bool
	}{
		{"running", nil, []byte("42 (sh) S 1"), nil, yes, false},
		{"zombie", nil, []byte("42 (a) b) Z 1"), nil, yes, true},
		{"no such process", syscall.ESRCH, nil, gone, yes, true},
		{"reaped between the looks", nil, nil, gone, yes, true},
		{"released while its state is read", nil, nil, &os.PathError{Op: "read", Path: "/proc/42/stat", Err: syscall.ESRCH}, yes, true},
		{"no /proc on this system", nil, nil, gone, no, false},
		{"another user's", syscall.EPERM, nil, &os.PathError{Op: "open", Path: "/proc/42/stat", Err: syscall.EACCES}, yes, false},
	}
	for _, c := range cases {
		if got := exited(c.killErr, c.stat, c.statErr, c.proc); got != c.want {
			t.Errorf("%s: exited = %v, want %v", c.name, got, c.want)
		}
	}
}
