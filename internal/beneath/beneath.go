// Package beneath is the one way ckfs reaches a path of the workspace
// behind the mount: from the root's directory descriptor, never leaving
// the root, and following no symlink in any element, the last one
// included. A directory that was replaced by a symlink (or by a file) is
// not a way through: the path as named does not exist there, and the
// caller gets ENOTDIR. So capture never stores bytes from outside the
// workspace, and a rewind never writes outside it.
//
// On Linux a path resolves in one openat2 call (RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS); where there is no openat2
// (other systems, kernels before 5.6) it resolves one element at a time
// with O_NOFOLLOW, which is the same policy, with more system calls.
//
// Paths are relative, slash-separated, with no empty, "." or ".." element
// (index.ValidatePath's form); anything else is refused with EINVAL before
// any system call.
package beneath

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnsafe marks a path that is not relative and plain (an absolute
// path, an empty, "." or ".." element).
var ErrUnsafe = errors.New("not a plain relative path")

// check refuses a path that could name anything but a place beneath the
// root.
// It runs on the FUSE request path (the cached model's opens): a scan of
// the bytes, nothing allocated unless it refuses.
func check(rel string) error {
	if rel == "" || rel[0] == '/' {
		return fmt.Errorf("%q: %w", rel, ErrUnsafe)
	}
	for start := 0; start <= len(rel); {
		end := strings.IndexByte(rel[start:], '/')
		if end < 0 {
			end = len(rel)
		} else {
			end += start
		}
		if e := rel[start:end]; e == "" || e == "." || e == ".." {
			return fmt.Errorf("%q: %w", rel, ErrUnsafe)
		}
		start = end + 1
	}
	return nil
}

// Open opens rel beneath the directory root with flags (O_NOFOLLOW and
// O_CLOEXEC are added: a final symlink fails with ELOOP, unless flags has
// O_PATH, which opens the link itself). A symlink or a file where a
// directory element should be gives ENOTDIR.
func Open(root int, rel string, flags int) (int, error) {
	if err := check(rel); err != nil {
		return -1, &os.PathError{Op: "open", Path: rel, Err: unix.EINVAL}
	}
	fd, err := open(root, rel, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// Lstat describes rel itself beneath root, a symlink as a symlink. A name
// in root itself costs one fstatat; a deeper one, on Linux, an O_PATH
// open of it (one call, and no more, when rel does not exist: a file
// about to be created), an fstat and a close.
func Lstat(root int, rel string, st *unix.Stat_t) error {
	if err := check(rel); err != nil {
		return &os.PathError{Op: "lstat", Path: rel, Err: unix.EINVAL}
	}
	if !strings.Contains(rel, "/") {
		return unix.Fstatat(root, rel, st, unix.AT_SYMLINK_NOFOLLOW)
	}
	return lstatDeep(root, rel, st)
}

// Parent opens the directory that holds rel, as a place to resolve names
// from (O_PATH where there is one: *at calls work from it), and returns
// it with rel's last element. The caller closes fd unless it is root
// (rel has one element). A symlink or file among the directories gives
// ENOTDIR.
func Parent(root int, rel string) (fd int, base string, err error) {
	if err := check(rel); err != nil {
		return -1, "", &os.PathError{Op: "open", Path: rel, Err: unix.EINVAL}
	}
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return root, rel, nil
	}
	fd, err = open(root, rel[:i], DirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return -1, "", err
	}
	return fd, rel[i+1:], nil
}

// walk resolves rel one element at a time from root, opening each
// directory with O_NOFOLLOW, and opens the last element with flags.
func walk(root int, rel string, flags int) (int, error) {
	elems := strings.Split(rel, "/")
	fd := root
	for _, e := range elems[:len(elems)-1] {
		next, err := unix.Openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if fd != root {
			unix.Close(fd)
		}
		if err == unix.ELOOP {
			err = unix.ENOTDIR
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: rel, Err: err}
		}
		fd = next
	}
	last, err := unix.Openat(fd, elems[len(elems)-1], flags, 0)
	if fd != root {
		unix.Close(fd)
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	return last, nil
}
