package workspace

import (
	"os"

	"github.com/ckfs-dev/ckfs/internal/mapped"
	"golang.org/x/sys/unix"
)

// syncMount writes back the pages a process dirtied through a shared
// memory mapping of a file on the mount, so that their WRITEs reach the
// daemon before a boundary and belong to the period they were made in.
// Every other write reaches the daemon when it is made. syncfs starts the
// writeback of the whole mount but does not wait for a FUSE daemon to
// answer it, so each file that a process near the caller (mapped.Near)
// still maps shared and writable is fsynced too, which waits. That search
// costs a hook about a millisecond, so it runs only once the daemon has
// served a mapping's writeback on this store (the very first one may
// still land after the boundary). It runs in the caller, never in the
// daemon (which must not wait on its own mount). A failure only loses
// that ordering: the pages are written back later, into the next period.
func syncMount(store string) {
	ds, err := ReadDaemonState(store)
	if err != nil || ds.Mountpoint == "" {
		return
	}
	fd, err := unix.Open(ds.Mountpoint, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	unix.Syncfs(fd)
	if _, err := os.Stat(Layout(store).MappedWrites()); err != nil {
		return // no mapping was ever written back on this store's mounts
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		mapped.Flush(st.Dev, mapped.Near())
	}
}
