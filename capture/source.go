package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/beneath"
	"github.com/ckfs-dev/ckfs/internal/xattr"
	"golang.org/x/sys/unix"
)

// Source reads the backing directory: the workspace as it is on disk,
// never through the mount. Paths are relative to the workspace root.
type Source interface {
	Lstat(rel string, st *unix.Stat_t) error
	// Open opens a regular file for reading without following a final
	// symlink.
	Open(rel string) (*File, error)
	Readlink(rel string) (string, error)
	// ReadDir lists the names in a directory.
	ReadDir(rel string) ([]string, error)
	// XAttrs returns the recorded extended attributes of a directory
	// (index.XAttrCaptured); files' are read from their open descriptor.
	XAttrs(rel string) (map[string][]byte, error)
}

// DirSource is a Source served from a directory file descriptor with *at
// system calls, so it never resolves the root by path (the root may be the
// mountpoint itself, hidden under the mount) and relative paths up to
// PATH_MAX work. Every path is resolved beneath the root without following
// a symlink in any element: a directory replaced by a symlink to somewhere
// else reads as absent, so capture never stores bytes from outside the
// workspace.
type DirSource struct{ fd int }

// NewDirSource returns a Source for the directory open at fd. The caller
// keeps fd open for the Source's lifetime.
func NewDirSource(fd int) *DirSource { return &DirSource{fd: fd} }

func (d *DirSource) Lstat(rel string, st *unix.Stat_t) error {
	return beneath.Lstat(d.fd, rel, st)
}

// LstatEach lstats every path of rels, calling fn with each result in
// order. Consecutive paths in one directory share one descriptor of it,
// so sorted paths cost one fstatat each, not a resolution of their whole
// path.
func (d *DirSource) LstatEach(rels []string, fn func(i int, st *unix.Stat_t, err error)) {
	dir, pfd, perr := "\x00", -1, error(nil)
	defer func() {
		if pfd >= 0 && pfd != d.fd {
			unix.Close(pfd)
		}
	}()
	var st unix.Stat_t
	for i, rel := range rels {
		parent, base := "", rel
		if j := strings.LastIndexByte(rel, '/'); j >= 0 {
			parent, base = rel[:j], rel[j+1:]
		}
		if parent != dir {
			if pfd >= 0 && pfd != d.fd {
				unix.Close(pfd)
			}
			dir, pfd, perr = parent, d.fd, nil
			if parent != "" {
				pfd, perr = beneath.Open(d.fd, parent, beneath.DirFlags)
			}
		}
		if perr != nil {
			fn(i, nil, perr)
			continue
		}
		if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			fn(i, nil, err)
			continue
		}
		fn(i, &st, nil)
	}
}

func (d *DirSource) Open(rel string) (*File, error) {
	// O_NOATIME: taking an image must not change what it images. It is
	// refused (EPERM) on files the daemon does not own unless it is root.
	flags := unix.O_RDONLY | unix.O_NONBLOCK
	fd, err := beneath.Open(d.fd, rel, flags|oNoatime)
	if errors.Is(err, unix.EPERM) {
		fd, err = beneath.Open(d.fd, rel, flags)
	}
	if err != nil {
		return nil, err
	}
	return &File{fd: fd}, nil
}

func (d *DirSource) Readlink(rel string) (string, error) {
	return beneath.Readlink(d.fd, rel)
}

func (d *DirSource) ReadDir(rel string) ([]string, error) {
	fd, err := beneath.Open(d.fd, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", rel, err)
	}
	return names, nil
}

func (d *DirSource) XAttrs(rel string) (map[string][]byte, error) {
	fd, err := beneath.Open(d.fd, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return xattr.Read(fd)
}

// File is a file Open opened, read with plain system calls: an os.File
// would cost two more per image (Go asks for the descriptor's flags and
// tries to register it with its poller, which refuses a regular file).
type File struct{ fd int }

func (f *File) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(f.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Fd is the open descriptor, owned by f.
func (f *File) Fd() int { return f.fd }

func (f *File) Close() error { return unix.Close(f.fd) }
