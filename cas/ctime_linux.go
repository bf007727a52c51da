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

// stampOf identifies the version of an object file: any write to it
// changes its inode change time.
func stampOf(fi fs.FileInfo) stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{size: uint64(fi.Size()), change: fi.ModTime().UnixNano()}
	}
	return stamp{ino: st.Ino, size: uint64(st.Size), change: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)).UnixNano()}
}
