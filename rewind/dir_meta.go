package rewind

import (
	"os"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/xattr"
	"golang.org/x/sys/unix"
)

// Metadata beside the content: extended attributes, link counts, modes,
// owners and special files, all through the same *at calls beneath the
// root as the rest of Dir.

// xattrHash is the address of an attribute set's object, "" when empty.
func xattrHash(attrs map[string][]byte) index.Hash {
	if len(attrs) == 0 {
		return ""
	}
	return cas.Sum(index.EncodeXAttrs(attrs))
}

// xattrsAt reads the recorded extended attributes of the file or directory
// base in pfd.
func (d *Dir) xattrsAt(pfd int, base string, dir bool) (map[string][]byte, error) {
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	if dir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Openat(pfd, base, flags, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), base)
	defer f.Close()
	return xattr.Read(int(f.Fd()))
}

// XAttrs returns the recorded extended attributes of the file or
// directory rel (none for other types).
func (d *Dir) XAttrs(rel string) (map[string][]byte, error) {
	pfd, base, st, err := d.lstat(rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return d.xattrsAt(pfd, base, false)
	case unix.S_IFDIR:
		return d.xattrsAt(pfd, base, true)
	}
	return nil, nil
}

// Links returns how many names the file at rel has (1 for a missing one).
func (d *Dir) Links(rel string) uint64 {
	pfd, _, st, err := d.lstat(rel)
	if err != nil {
		return 1
	}
	unix.Close(pfd)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return 1
	}
	return uint64(st.Nlink)
}

// lstat opens the parent of rel and stats rel in it (not following a
// symlink); the caller closes pfd when err is nil.
func (d *Dir) lstat(rel string) (pfd int, base string, st unix.Stat_t, err error) {
	pfd, base, err = d.parent(rel)
	if err != nil {
		return -1, "", st, err
	}
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		unix.Close(pfd)
		return -1, "", st, &os.PathError{Op: "stat", Path: rel, Err: err}
	}
	return pfd, base, st, nil
}

// Mknod replaces rel with a FIFO, socket or device node of exactly the
// given type, mode and device number.
func (d *Dir) Mknod(rel string, st index.State) error {
	pfd, base, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	tmp := tempName(base)
	if err := mknodat(pfd, tmp, index.ModeOfType(st.Type)|0o600, st.Rdev); err != nil {
		return &os.PathError{Op: "mknod", Path: rel, Err: err}
	}
	err = chownAt(pfd, tmp, st.Owner)
	if err == nil {
		err = unix.Fchmodat(pfd, tmp, st.Mode, 0)
	}
	if err == nil {
		err = unix.Renameat(pfd, tmp, pfd, base)
	}
	if err != nil {
		unix.Unlinkat(pfd, tmp, 0)
		return &os.PathError{Op: "mknod", Path: rel, Err: err}
	}
	return unix.Fsync(pfd)
}

// SetMeta sets the mode, owner and extended attributes of rel (never
// through a symlink; a symlink gets its owner only, a special file its
// owner and mode).
func (d *Dir) SetMeta(rel string, m Meta) error {
	pfd, base, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	return d.setMeta(pfd, base, rel, m)
}

func (d *Dir) setMeta(pfd int, base, rel string, m Meta) error {
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "chmod", Path: rel, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		if m.Full {
			return chownAt(pfd, base, m.Owner) // symlink modes mean nothing on Linux
		}
		return nil
	case unix.S_IFREG, unix.S_IFDIR:
		fd, err := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: rel, Err: err}
		}
		f := os.NewFile(uintptr(fd), base)
		defer f.Close()
		if err := applyMeta(f, m); err != nil {
			return &os.PathError{Op: "set metadata", Path: rel, Err: err}
		}
		return nil
	}
	if m.Full {
		if err := chownAt(pfd, base, m.Owner); err != nil {
			return &os.PathError{Op: "chown", Path: rel, Err: err}
		}
	}
	if err := unix.Fchmodat(pfd, base, m.Mode, 0); err != nil {
		return &os.PathError{Op: "chmod", Path: rel, Err: err}
	}
	return nil
}
