package cas

import (
	"io/fs"
	"syscall"
	"time"
)

// inodeChange returns the inode change time of p (not following links).
func inodeChange(p string) (time.Time, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return time.Time{}, &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), nil
}
