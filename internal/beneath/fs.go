package beneath

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FS is the directory tree under a root descriptor as an fs.FS (with
// fs.ReadDirFS's and fs.ReadLinkFS's methods), every name resolved by this
// package's policy: fs.WalkDir over it never leaves the root and never
// passes through a symlink. Names are fs.ValidPath's ("." is the root).
type FS struct{ root int }

// NewFS returns the tree under the directory open at root; the caller
// keeps root open while the FS is used.
func NewFS(root int) FS { return FS{root} }

// OpenFile opens name with flags (O_NOFOLLOW added).
func (f FS) OpenFile(name string, flags int) (*os.File, error) {
	var fd int
	var err error
	if name == "." {
		fd, err = unix.Openat(f.root, ".", flags|unix.O_CLOEXEC, 0)
	} else if !fs.ValidPath(name) || strings.ContainsRune(name, 0) {
		err = &os.PathError{Op: "open", Path: name, Err: unix.EINVAL}
	} else {
		fd, err = Open(f.root, name, flags)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Open opens name for reading.
func (f FS) Open(name string) (fs.File, error) { return f.OpenFile(name, unix.O_RDONLY) }

// ReadDir lists the directory name, sorted by name.
func (f FS) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := f.OpenFile(name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	es, err := d.ReadDir(-1)
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return es, err
}

// Lstat describes name itself, a symlink as a symlink. Its Sys is the
// *unix.Stat_t.
func (f FS) Lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	var err error
	if name == "." {
		err = unix.Fstat(f.root, &st)
	} else {
		err = Lstat(f.root, name, &st)
	}
	if err != nil {
		return nil, &os.PathError{Op: "lstat", Path: name, Err: unwrap(err)}
	}
	return statInfo{name: path.Base(name), st: st}, nil
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// statInfo is an fs.FileInfo from a stat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return int64(i.st.Size) }
func (i statInfo) ModTime() time.Time { return time.Unix(int64(i.st.Mtim.Sec), int64(i.st.Mtim.Nsec)) }
func (i statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i statInfo) Sys() any           { return &i.st }

func (i statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if i.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// ReadLink returns the target of the symlink name.
func (f FS) ReadLink(name string) (string, error) { return Readlink(f.root, name) }

// Readlink returns the target of the symlink rel beneath root, however
// long.
func Readlink(root int, rel string) (string, error) {
	pfd, base, err := Parent(root, rel)
	if err != nil {
		return "", err
	}
	if pfd != root {
		defer unix.Close(pfd)
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(pfd, base, buf)
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: rel, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
