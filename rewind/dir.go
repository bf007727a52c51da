package rewind

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/beneath"
	"github.com/ckfs-dev/ckfs/internal/durable"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/xattr"
	"golang.org/x/sys/unix"
)

// Dir is the workspace as the rewind sees it: every access is made with
// *at system calls from the root's descriptor, one path element at a time,
// never following a symlink and never leaving the root. Paths are validated
// with index.ValidatePath before use, so no element is "..".
type Dir struct {
	fd int
}

// NewDir returns a Dir for the directory open at fd (O_PATH is enough).
func NewDir(fd int) *Dir { return &Dir{fd: fd} }

// errNotDir marks a path element that is a file or a symlink.
var errNotDir = notDirError{}

type notDirError struct{}

func (notDirError) Error() string { return "" }

// ErrUnsafePath means a path cannot be used without leaving the root or
// passing through a symlink.
var ErrUnsafePath = errors.New("unsafe path")

// parent opens the directory that holds rel (internal/beneath's policy:
// no symlink on the way, never out of the root) and returns it with rel's
// last element. The descriptor can be synced; the caller closes it.
func (d *Dir) parent(rel string) (int, string, error) {
	if err := index.ValidatePath(rel); err != nil {
		return -1, "", fmt.Errorf("%w: %v", ErrUnsafePath, err)
	}
	dir, base := ".", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, base = rel[:i], rel[i+1:]
	}
	var fd int
	var err error
	if dir == "." {
		fd, err = unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = beneath.Open(d.fd, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	}
	switch {
	case errors.Is(err, unix.ENOTDIR):
		return -1, "", fmt.Errorf("%w: %s: an element of %s is not a directory (a symlink or a file)%w", ErrUnsafePath, rel, dir, errNotDir)
	case err != nil:
		return -1, "", err
	}
	return fd, base, nil
}

// State returns what is at rel now, with the hash of its content (not
// stored). A path whose parent is missing, or is not a real directory (a
// file or a symlink stands where the directory was), does not exist as
// recorded: it is absent.
func (d *Dir) State(rel string) (index.State, error) {
	return d.stat(rel, true)
}

// Stat is State without reading contents: no hash.
func (d *Dir) Stat(rel string) (index.State, error) {
	return d.stat(rel, false)
}

func (d *Dir) stat(rel string, withHash bool) (index.State, error) {
	pfd, base, err := d.parent(rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOENT) || errors.Is(err, errNotDir) {
			return index.State{Type: index.TypeAbsent}, nil
		}
		return index.State{}, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return index.State{Type: index.TypeAbsent}, nil
		}
		return index.State{}, &os.PathError{Op: "stat", Path: rel, Err: err}
	}
	s := index.State{Size: st.Size, MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Mode: uint32(st.Mode) & 0o7777, Owner: index.OwnerOf(st.Uid, st.Gid)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		s.Type, s.Size = index.TypeDir, 0
		if withHash {
			attrs, err := d.xattrsAt(pfd, base, true)
			if err != nil {
				return s, &os.PathError{Op: "read extended attributes", Path: rel, Err: err}
			}
			s.XAttrs = xattrHash(attrs)
		}
	case unix.S_IFLNK:
		s.Type = index.TypeSymlink
		if !withHash {
			break
		}
		target, err := readlinkat(pfd, base)
		if err != nil {
			return s, &os.PathError{Op: "readlink", Path: rel, Err: err}
		}
		s.Hash, s.Size = cas.Sum([]byte(target)), int64(len(target))
	case unix.S_IFREG:
		s.Type = index.TypeFile
		if !withHash {
			break
		}
		h, n, attrs, err := d.hashFile(pfd, base)
		if err != nil {
			return s, &os.PathError{Op: "read", Path: rel, Err: err}
		}
		s.Hash, s.Size, s.XAttrs = h, n, xattrHash(attrs)
	default:
		t, ok := index.TypeOfMode(uint32(st.Mode))
		if !ok {
			return s, fmt.Errorf("%s has an unknown file type (mode %o)", rel, st.Mode&unix.S_IFMT)
		}
		s.Type, s.Size = t, 0
		if t == index.TypeChar || t == index.TypeBlock {
			s.Rdev = uint64(st.Rdev)
		}
	}
	return s, nil
}

func (d *Dir) hashFile(pfd int, base string) (cas.Hash, int64, map[string][]byte, error) {
	f, err := d.openRead(pfd, base)
	if err != nil {
		return "", 0, nil, err
	}
	defer f.Close()
	attrs, err := xattr.Read(int(f.Fd()))
	if err != nil {
		return "", 0, nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", 0, nil, err
	}
	return cas.Sum(b), int64(len(b)), attrs, nil
}

func (d *Dir) openRead(pfd int, base string) (*os.File, error) {
	fd, err := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), base), nil
}

// Content returns the bytes at rel: a file's content or a symlink's target.
func (d *Dir) Content(rel string) ([]byte, error) {
	pfd, base, st, err := d.lstat(rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		t, err := readlinkat(pfd, base)
		return []byte(t), err
	}
	f, err := d.openRead(pfd, base)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	defer f.Close()
	return io.ReadAll(f)
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// tempName returns a fresh temp name beside base. It keeps as much of base
// as fits (so a person who finds one left by a crash can tell what it was)
// while the whole stays within NAME_MAX bytes, cutting on a byte boundary:
// the name is only ever used through *at calls, never shown unescaped.
func tempName(base string) string {
	var b [6]byte
	rand.Read(b[:])
	prefix := ".ckfs-rewind-" + hex.EncodeToString(b[:]) + "-"
	if max := nameMax - len(prefix); len(base) > max {
		base = base[:max]
	}
	return prefix + base
}

// nameMax is the longest file name (in bytes) Linux filesystems accept.
const nameMax = 255

// WriteFile replaces rel with content and mode atomically: temp file in the
// same directory, write, exact mode, fsync, rename, fsync the directory.
func (d *Dir) WriteFile(rel string, content io.Reader, mode uint32) error {
	return d.writeFile(rel, content, Meta{Mode: mode}, true)
}

// writeFile is WriteFile; without sync it leaves durability to a later
// SyncFS (the rewind journal covers a crash in between).
func (d *Dir) writeFile(rel string, content io.Reader, m Meta, sync bool) error {
	pfd, base, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	tmp := tempName(base)
	fd, err := unix.Openat(pfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	werr := func() error {
		if err := copySparse(f, content); err != nil {
			return err
		}
		if err := applyMeta(f, m); err != nil {
			return err
		}
		if !sync {
			return nil
		}
		return f.Sync()
	}()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(pfd, tmp, pfd, base)
	}
	if werr != nil {
		unix.Unlinkat(pfd, tmp, 0)
		return &os.PathError{Op: "write", Path: rel, Err: werr}
	}
	if !sync {
		return nil
	}
	return unix.Fsync(pfd)
}

// SyncFS makes everything written to the workspace's filesystem durable.
func (d *Dir) SyncFS() error {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return durable.SyncFSOf(fd)
}

// Symlink replaces rel with a symlink to target, owned by owner ("" or
// without the right to chown: by this process).
func (d *Dir) Symlink(rel, target, owner string) error {
	pfd, base, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	tmp := tempName(base)
	if err := unix.Symlinkat(target, pfd, tmp); err != nil {
		return &os.PathError{Op: "symlink", Path: rel, Err: err}
	}
	err = chownAt(pfd, tmp, owner)
	if err == nil {
		err = unix.Renameat(pfd, tmp, pfd, base)
	}
	if err != nil {
		unix.Unlinkat(pfd, tmp, 0)
		return &os.PathError{Op: "symlink", Path: rel, Err: err}
	}
	return unix.Fsync(pfd)
}

// Remove deletes the file or symlink at rel; a missing path is not an error.
func (d *Dir) Remove(rel string) error { return d.unlink(rel, 0) }

// Rmdir removes the empty directory at rel; a missing path is not an error.
func (d *Dir) Rmdir(rel string) error { return d.unlink(rel, unix.AT_REMOVEDIR) }

func (d *Dir) unlink(rel string, flags int) error {
	pfd, base, err := d.parent(rel)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Unlinkat(pfd, base, flags); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: rel, Err: err}
	}
	return unix.Fsync(pfd)
}

// Mkdir creates the directory rel with exactly m's mode (setgid and sticky
// included), owner and extended attributes; an existing directory just
// gets them.
func (d *Dir) Mkdir(rel string, m Meta) error {
	pfd, base, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Mkdirat(pfd, base, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: rel, Err: err}
	}
	if err := d.setMeta(pfd, base, rel, m); err != nil {
		return err
	}
	return unix.Fsync(pfd)
}

// Entries lists the names in directory rel.
func (d *Dir) Entries(rel string) ([]string, error) {
	pfd, base, err := d.parent(rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	fd, err := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "opendir", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return f.Readdirnames(-1)
}
