//go:build linux

package mapped

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want Mapping
		ok   bool
	}{
		{"7f1c2a000000-7f1c2a001000 rw-s 00000000 00:2b 1234                       /repo/data.bin\n",
			Mapping{0x7f1c2a000000, 0x7f1c2a001000, "rw-s", unix.Mkdev(0, 0x2b), 1234, "/repo/data.bin"}, true},
		{"7f1c2a000000-7f1c2a001000 r--s 00000000 00:2b 1234 /repo/a b.bin",
			Mapping{0x7f1c2a000000, 0x7f1c2a001000, "r--s", unix.Mkdev(0, 0x2b), 1234, "/repo/a b.bin"}, true},
		{"00400000-00a00000 r-xp 00000000 fd:01 77 /usr/bin/ckfs",
			Mapping{0x400000, 0xa00000, "r-xp", unix.Mkdev(0xfd, 1), 77, "/usr/bin/ckfs"}, true},
		{"7f1c2a000000-7f1c2a001000 rw-s 00000000 00:2b 1234 /repo/gone.bin (deleted)", Mapping{}, false},
		{"55d0c1a0f000-55d0c1a30000 rw-p 00000000 00:00 0                          [heap]", Mapping{}, false},
		{"7ffd1c9e5000-7ffd1c9e7000 r-xp 00000000 00:00 0 [vdso]", Mapping{}, false},
		{"7f1c2a000000-7f1c2a001000 rw-p 00000000 00:00 0 ", Mapping{}, false},
		{"7f1c2a001000-7f1c2a000000 rw-s 00000000 00:2b 1234 /repo/backwards", Mapping{}, false},
		{"garbage", Mapping{}, false},
		{"a b c zz:01 5 /x", Mapping{}, false},
	} {
		got, ok := ParseLine(c.line)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ParseLine(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
	if m, _ := ParseLine("7f1c2a000000-7f1c2a001000 rw-s 00000000 00:2b 1234 /a"); !m.SharedWritable() {
		t.Error("rw-s is shared and writable")
	}
	if m, _ := ParseLine("7f1c2a000000-7f1c2a001000 rw-p 00000000 00:2b 1234 /a"); m.SharedWritable() {
		t.Error("rw-p is private")
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add("7f1c2a000000-7f1c2a001000 rw-s 00000000 00:2b 1234 /repo/data.bin\n")
	f.Add("55d0c1a0f000-55d0c1a30000 rw-p 00000000 00:00 0 [heap]")
	f.Fuzz(func(t *testing.T, line string) {
		m, ok := ParseLine(line)
		if !ok {
			return
		}
		if !strings.HasPrefix(m.Path, "/") || m.Ino == 0 || m.End <= m.Start || len(m.Perms) != 4 || !strings.Contains(line, m.Path) {
			t.Fatalf("ParseLine(%q) = %+v", line, m)
		}
		if m.SharedWritable() != (m.Perms[1] == 'w' && m.Perms[3] == 's') {
			t.Fatalf("SharedWritable of %q", m.Perms)
		}
	})
}

// This test process is in its parent's tree.
func TestSubtree(t *testing.T) {
	procs := subtree([]int{unix.Getppid()}, maxProcs)
	found := false
	for _, p := range procs {
		found = found || p == unix.Getpid()
	}
	if !found {
		t.Errorf("this process is not in its parent's subtree: %v", procs)
	}
	if got := subtree([]int{unix.Getppid()}, 1); len(got) != 1 {
		t.Errorf("subtree with limit 1: %v", got)
	}
}

// What a boundary pays when nothing is mapped: the walk of the caller's
// grandparent's processes and their maps.
func BenchmarkFlushNear(b *testing.B) {
	for b.Loop() {
		Flush(1, Near())
	}
	b.ReportMetric(float64(len(subtree(Near(), maxProcs))), "procs")
}

// A process of the caller's session that is no descendant of its
// grandparent (a background job whose shell exited) is near.
func TestNearHasTheSession(t *testing.T) {
	c := exec.Command("sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	defer unix.Kill(orphan, unix.SIGKILL)
	if slices.Contains(subtree([]int{unix.Getpid()}, maxProcs), orphan) {
		t.Fatalf("the orphan %d is still this process's descendant: the test cannot tell", orphan)
	}
	if !slices.Contains(subtree(Near(), maxProcs), orphan) {
		t.Errorf("the orphaned background job %d is not near", orphan)
	}
}
