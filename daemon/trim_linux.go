package daemon

import (
	"os"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/mapped"
	"golang.org/x/sys/unix"
)

// trimBinaryPages unmaps, from this process's page tables only, the pages
// of its own executable's read-only mappings (code and read-only data).
// Starting a daemon runs much code it never runs again (the command line,
// parsers, the remote client's set-up) and the pages stay mapped, counted
// in its resident memory, until something unmaps them. They stay in the
// page cache: a page the daemon runs again is mapped back by a minor
// fault. Writable mappings (data, bss) are left alone: dropping those
// would lose what the process wrote.
func trimBinaryPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for line := range strings.Lines(string(b)) {
		m, ok := mapped.ParseLine(line)
		if !ok || m.Path != exe || m.Perms[1] == 'w' || m.Perms[3] != 'p' {
			continue
		}
		unix.Syscall(unix.SYS_MADVISE, uintptr(m.Start), uintptr(m.End-m.Start), unix.MADV_DONTNEED)
	}
}
