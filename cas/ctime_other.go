//go:build !linux

package cas

import (
	"os"
	"time"
)

// inodeChange returns the modification time of p where the inode change
// time is not portable; objects are never modified after they are linked,
// so it is when the object was written.
func inodeChange(p string) (time.Time, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return time.Time{}, err
	}
	return st.ModTime(), nil
}

// stampOf identifies the version of an object file by size and
// modification time where the inode change time is not portable.
func stampOf(fi os.FileInfo) stamp {
	return stamp{size: uint64(fi.Size()), change: fi.ModTime().UnixNano()}
}
