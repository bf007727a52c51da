package workspace

import "golang.org/x/sys/unix"

// syncMount writes back the pages a process dirtied through a shared
// memory mapping of a file on the mount, so that their WRITEs reach the
// daemon before a boundary and belong to the period they were made in.
// Every other write reaches the daemon when it is made. It runs in the
// caller, never in the daemon (which must not wait on its own mount), and
// costs little when nothing is dirty. A failure only loses that ordering:
// the pages are written back later, into the next period.
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
}
