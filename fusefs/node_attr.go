package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Setattr records the pre-image before a truncate, chmod, chown or utimens
// reaches the disk (metadata-only changes are recorded as images whose
// content is unchanged).
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if in.Valid&(fuse.FATTR_SIZE|fuse.FATTR_MODE|fuse.FATTR_UID|fuse.FATTR_GID|fuse.FATTR_MTIME|fuse.FATTR_MTIME_NOW) != 0 {
		rel, ok := n.rel()
		if !ok && f == nil {
			f = n.pinnedFile() // unlinked, and served without a handle
		}
		if !ok || rel == "" {
			// Deleted but still open (its pre-image was taken at unlink),
			// or the root, whose own attributes are not recorded.
			return n.LoopbackNode.Setattr(ctx, unwrap(f), in, out)
		}
		done, err := n.fsys.hooks.BeginChange(caller(ctx), rel)
		if err != nil {
			return refuse(err)
		}
		defer done()
	}
	return n.LoopbackNode.Setattr(ctx, unwrap(f), in, out)
}

// Setxattr and Removexattr record the pre-image before an extended
// attribute changes (ckfs records the user namespace and ACLs).
func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	done, errno := n.beforeMeta(ctx)
	if errno != 0 {
		return errno
	}
	defer done()
	if n.isRoot() {
		return fs.ToErrno(unix.Setxattr(n.RootData.Path, attr, data, int(flags)))
	}
	return n.LoopbackNode.Setxattr(ctx, attr, data, flags)
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	done, errno := n.beforeMeta(ctx)
	if errno != 0 {
		return errno
	}
	defer done()
	if n.isRoot() {
		return fs.ToErrno(unix.Removexattr(n.RootData.Path, attr))
	}
	return n.LoopbackNode.Removexattr(ctx, attr)
}

// The root's own extended attributes. go-fuse's loopback reaches a node's
// attributes with the l-variants (a symlink's own, not its target's), and
// the root's path may be /proc/self/fd/N: a procfs symlink whose own
// attributes are not the directory's (ENOTSUP, which the kernel's ACL
// check of the root then refuses every other user with). The root is a
// directory, so the following variants reach it by either path.
func (n *node) isRoot() bool { return n == n.fsys.root }

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	var sz uint32
	var errno syscall.Errno
	if n.isRoot() {
		size, err := unix.Getxattr(n.RootData.Path, attr, dest)
		sz, errno = uint32(max(size, 0)), fs.ToErrno(err)
	} else {
		sz, errno = n.LoopbackNode.Getxattr(ctx, attr, dest)
	}
	if errno == syscall.ENODATA && attr == selinuxLabel {
		return 0, syscall.EOPNOTSUPP
	}
	return sz, errno
}

// selinuxLabel is the attribute SELinux keeps a file's label in. When a
// security module keeps labels, the kernel answers for it and never asks
// the daemon; when a request for it arrives, no module does, and a file
// without one answers EOPNOTSUPP rather than ENODATA. ls -l asks every
// file for its label and stops asking a device that does not support
// labels: one request for the mount instead of one a file, which made
// `ls -lR` 3.7 times faster. A label that is there reads back, and
// setting one goes through as before.
const selinuxLabel = "security.selinux"

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if n.isRoot() {
		sz, err := unix.Listxattr(n.RootData.Path, dest)
		return uint32(sz), fs.ToErrno(err)
	}
	return n.LoopbackNode.Listxattr(ctx, dest)
}

// beforeMeta takes the pre-image of the node before a metadata change; the
// root's own attributes are not recorded.
func (n *node) beforeMeta(ctx context.Context) (done func(), errno syscall.Errno) {
	rel, ok := n.rel()
	if !ok || rel == "" {
		return func() {}, 0
	}
	done, err := n.fsys.hooks.BeginChange(caller(ctx), rel)
	return done, refuse(err)
}

// CopyFileRange hands the loopback its own handles. The destination is a
// writable handle, so its pre-image was taken when it was opened.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	if fhIn == nil || fhOut == nil {
		// Opened without a handle (the cached model): the kernel copies
		// by READ and WRITE instead, each captured as any other.
		return 0, syscall.ENOSYS
	}
	return n.LoopbackNode.CopyFileRange(ctx, unwrap(fhIn), offIn, out, unwrap(fhOut), offOut, length, flags)
}

// unwrap returns the loopback handle inside ours.
func unwrap(f fs.FileHandle) fs.FileHandle {
	if h, ok := f.(*handle); ok {
		return h.LoopbackFile
	}
	return f
}
