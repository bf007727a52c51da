//go:build linux

package mapped

import (
	"os"
	"strconv"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/proc"
	"golang.org/x/sys/unix"
)

// maxProcs bounds the processes one Flush looks at, and so its cost at a
// boundary (reading a process's maps costs the kernel a walk of its
// mappings: about 0.1-0.5 ms for an agent's process).
const maxProcs = 64

// Flush fsyncs every regular file on device dev that a process in the
// subtrees of roots (the processes and their descendants) maps shared and
// writable, and returns how many it synced. Processes it may not inspect
// are skipped; nothing here fails the caller.
func Flush(dev uint64, roots []int) int {
	files := map[uint64]string{}
	for _, pid := range subtree(roots, maxProcs) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if m, ok := ParseLine(line); ok && m.Dev == dev && m.SharedWritable() {
				files[m.Ino] = m.Path
			}
		}
	}
	synced := 0
	for ino, path := range files {
		if syncFile(path, dev, ino) {
			synced++
		}
	}
	return synced
}

// syncFile fsyncs path if it is still the regular file dev/ino.
func syncFile(path string, dev, ino uint64) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != dev || st.Ino != ino {
		return false
	}
	// The wait for the file's WRITEs comes before the FSYNC request, so
	// whatever the daemon answers to that, the pages have reached it.
	unix.Fdatasync(fd)
	return true
}

// subtree lists roots and their descendants, breadth first, at most limit.
func subtree(roots []int, limit int) []int {
	seen := map[int]bool{}
	queue := []int{}
	for _, r := range roots {
		if r > 0 && !seen[r] {
			seen[r] = true
			queue = append(queue, r)
		}
	}
	for i := 0; i < len(queue) && len(queue) < limit; i++ {
		for _, c := range children(queue[i]) {
			if !seen[c] && len(queue) < limit {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return queue
}

// children lists the child processes of every thread of pid.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// Near returns the processes a boundary client looks under: its
// grandparent (an agent, whose tool processes and hook shells are its
// descendants, or the terminal a user typed in; its parent where the
// grandparent is init or unknown), and every process of the caller's
// session: a tool's background job outlives the shell that started it and
// is then no one's descendant, but it keeps the session.
func Near() []int {
	root := os.Getppid()
	if _, gp, err := (proc.System{}).Parent(root); err == nil && gp > 1 {
		root = gp
	}
	return append([]int{root}, session()...)
}

// session lists the other processes of the caller's session, at most
// maxProcs.
func session() []int {
	me, err := unix.Getsid(0)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if sid, err := unix.Getsid(pid); err == nil && sid == me {
			out = append(out, pid)
			if len(out) == maxProcs {
				break
			}
		}
	}
	return out
}
