package index

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// The reserve. A timeline lives on the same disk as the objects it names,
// so a full disk would otherwise stop it from recording anything — not
// even that a window closed, or that a post-image could not be stored.
// The Writer keeps ReserveFile, ReserveSize bytes of allocated space, in
// the store; when an append fails because the disk is full it gives the
// reserve back to the filesystem and tries once more. Boundaries and skip
// records then still reach the timeline while the user frees space. The
// reserve is made again (RefillReserve) once there is room.

// ReserveFile is the reserve's name in a store directory.
const ReserveFile = "reserve"

// ReserveSize is the space kept in reserve: thousands of records.
const ReserveSize = 1 << 20

// IsDiskFull reports whether err means the disk (or the user's quota) is
// full.
func IsDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// RefillReserve makes sure the reserve exists with its full size; it
// reports whether it does now.
func (w *Writer) RefillReserve() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refillReserve()
}

func (w *Writer) refillReserve() bool {
	p := filepath.Join(filepath.Dir(w.path), ReserveFile)
	if st, err := os.Stat(p); err == nil && st.Size() == ReserveSize {
		w.reserveUsed = false
		return true
	}
	// Only when there is room for more than the reserve: refilling it
	// with the very space it freed would let the disk fill up again at
	// once, and records lose their way through.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(w.path), &fs); err == nil && int64(fs.Bavail)*int64(fs.Bsize) < 2*ReserveSize+ReserveSize/2 {
		return false
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	// Written, not just sized: a sparse file would free nothing.
	if _, err := f.WriteAt(make([]byte, ReserveSize), 0); err != nil {
		f.Close()
		os.Remove(p)
		return false
	}
	if err := f.Sync(); err != nil {
		return false
	}
	w.reserveUsed = false
	return true
}

// ReserveUsed reports whether the reserve was given back to let an append
// through a full disk and has not been made again since.
func (w *Writer) ReserveUsed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reserveUsed
}

// useReserve gives the reserve back to the filesystem; false if there was
// none.
func (w *Writer) useReserve() bool {
	p := filepath.Join(filepath.Dir(w.path), ReserveFile)
	if err := os.Remove(p); err != nil {
		return false
	}
	w.reserveUsed = true
	return true
}
