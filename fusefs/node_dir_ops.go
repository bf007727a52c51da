package fusefs

import (
	"cmp"
	"context"
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// before takes the pre-image of name in n; done must be called once the
// change is made (or has failed).
func (n *node) before(ctx context.Context, name string) (done func(), errno syscall.Errno) {
	rel, ok := n.child(name)
	if !ok {
		return nil, syscall.ENOENT
	}
	done, err := n.fsys.hooks.BeginChange(caller(ctx), rel)
	return done, refuse(err)
}

// Lookup is the loopback's, with the node id it hands out journaled.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if in, ok := n.lookupStale(ctx, name); ok {
		return in, 0
	}
	in, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == 0 {
		n.handed(ctx, name, in)
	}
	return in, errno
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	done, errno := n.before(ctx, name)
	if errno != 0 {
		return nil, errno
	}
	defer done()
	in, errno := n.LoopbackNode.Mkdir(makerCtx(ctx), name, mode, out)
	if errno == 0 {
		n.callerGroup(ctx, name, out)
		n.handed(ctx, name, in)
		n.keepSpecialBits(name, mode, out)
	}
	return in, errno
}

// Running as root, go-fuse's loopback chowns every node it makes to the
// uid and gid of the process that made it, where the disk gives a node
// made in a setgid directory that directory's group. The loopback is
// therefore handed the caller with the group "unchanged" ((gid_t)-1,
// which chown leaves alone: makerCtx), so the node keeps the group the
// disk gave it, and callerGroup gives it the caller's where the disk's
// own rule would have.
var (
	asRoot    = os.Geteuid() == 0
	daemonGid = uint32(os.Getegid())
)

// keepGroup is (gid_t)-1 as chown takes it: the group is left alone.
const keepGroup = ^uint32(0)

// makerCtx is ctx with its caller's group replaced by keepGroup, or
// with no caller at all when the caller is the daemon's own user: the
// node is then the caller's already, and the loopback's chown, which
// would only clear setuid and setgid, is left out.
func makerCtx(ctx context.Context) context.Context {
	c, ok := fuse.FromContext(ctx)
	if !asRoot || !ok {
		return ctx
	}
	if c.Uid == 0 {
		return noCaller{ctx}
	}
	k := *c
	k.Gid = keepGroup
	return fuse.NewContext(ctx, &k)
}

// noCaller hides the FUSE caller of the context it wraps.
type noCaller struct{ context.Context }

func (c noCaller) Value(key any) any {
	v := c.Context.Value(key)
	if _, ok := v.(*fuse.Caller); ok {
		return nil
	}
	return v
}

// keepSpecialBits gives the node name just made the setuid, setgid and
// sticky bits of mode it lacks: os.Mkdir drops them, and a chown of a new
// file to another user clears setuid and setgid. Bits the disk gave it
// stay (the setgid of a directory made in a setgid directory).
func (n *node) keepSpecialBits(name string, mode uint32, out *fuse.EntryOut) {
	special := mode & 0o7000
	if out.Attr.Mode&special == special {
		return
	}
	perm := out.Attr.Mode&0o7777 | special
	if unix.Fchmodat(n.fsys.rootFd, mustChild(n, name), perm, 0) == nil {
		out.Attr.Mode = out.Attr.Mode&^0o7777 | perm
	}
}

// callerGroup gives the node just made (through makerCtx) the group of the
// process that made it, unless the disk gave it its directory's. A node
// whose group is not the daemon's got it from a setgid directory; one
// with the daemon's group is already right when the caller's is the
// same, and otherwise its directory tells (a setgid directory of the
// daemon's group keeps it).
func (n *node) callerGroup(ctx context.Context, name string, out *fuse.EntryOut) {
	c, ok := fuse.FromContext(ctx)
	if !asRoot || !ok || out.Attr.Gid != daemonGid || c.Gid == daemonGid {
		return
	}
	dir, ok := n.rel()
	var st unix.Stat_t
	if !ok || unix.Fstatat(n.fsys.rootFd, cmp.Or(dir, "."), &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_ISGID != 0 {
		return
	}
	if unix.Fchownat(n.fsys.rootFd, mustChild(n, name), -1, int(c.Gid), unix.AT_SYMLINK_NOFOLLOW) == nil {
		out.Attr.Gid = c.Gid
	}
}

func mustChild(n *node, name string) string {
	rel, _ := n.child(name)
	return rel
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	done, errno := n.before(ctx, name)
	if errno != 0 {
		return nil, errno
	}
	defer done()
	in, errno := n.LoopbackNode.Mknod(makerCtx(ctx), name, mode, rdev, out)
	if errno != 0 {
		return nil, errno
	}
	n.callerGroup(ctx, name, out)
	n.handed(ctx, name, in)
	n.keepSpecialBits(name, mode, out)
	return in, 0
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	done, errno := n.before(ctx, name)
	if errno != 0 {
		return errno
	}
	defer done()
	var ch *fs.Inode
	if n.fsys.journaled() {
		ch = n.GetChild(name)
	}
	errno = n.LoopbackNode.Rmdir(ctx, name)
	if errno == 0 {
		n.fsys.unreachable(ch)
	}
	return errno
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	done, errno := n.before(ctx, name)
	if errno != 0 {
		return errno
	}
	defer done()
	n.pinChild(name)
	var ch *fs.Inode
	if n.fsys.journaled() {
		ch = n.GetChild(name)
	}
	errno = n.LoopbackNode.Unlink(ctx, name)
	if errno == 0 {
		n.fsys.unreachable(ch)
	}
	return errno
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	done, errno := n.before(ctx, name)
	if errno != 0 {
		return nil, errno
	}
	defer done()
	in, errno := n.LoopbackNode.Symlink(makerCtx(ctx), target, name, out)
	if errno == 0 {
		n.callerGroup(ctx, name, out)
		n.handed(ctx, name, in)
	}
	return in, errno
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	done, errno := n.before(ctx, name)
	if errno != 0 {
		return nil, errno
	}
	defer done()
	if t, ok := target.(*node); ok {
		target = &t.LoopbackNode
	}
	in, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		n.handed(ctx, name, in)
	}
	return in, errno
}

// renameExchange is RENAME_EXCHANGE as the FUSE protocol carries it.
const renameExchange = 0x2

// Rename takes the pre-images of both sides (with everything under them,
// for directories) before forwarding, for plain renames, RENAME_NOREPLACE
// and RENAME_EXCHANGE alike.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	src, ok1 := n.child(name)
	dst, ok2 := np.child(newName)
	if !ok1 || !ok2 {
		return syscall.ENOENT
	}
	exchange := flags&renameExchange != 0
	done, err := n.fsys.hooks.BeginRename(caller(ctx), src, dst, exchange)
	if err != nil {
		return refuse(err)
	}
	defer done()
	if !exchange {
		np.pinChild(newName) // renamed over
	}
	var moving, over *fs.Inode
	if n.fsys.journaled() {
		moving, over = n.GetChild(name), np.GetChild(newName)
	}
	errno := n.LoopbackNode.Rename(ctx, name, &np.LoopbackNode, newName, flags)
	if errno == 0 {
		n.fsys.hooks.Renamed(src, dst, exchange)
		n.fsys.moved(moving, np, newName)
		if exchange {
			n.fsys.moved(over, n, name)
		} else if over != moving {
			n.fsys.unreachable(over)
		}
	}
	return errno
}
