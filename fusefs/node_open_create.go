package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// writable reports whether open flags can change the file.
func writable(flags uint32) bool {
	return flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC) != 0
}

// Open forwards read-only opens untouched (their handles keep kernel
// passthrough). A writable open takes the pre-image first: with
// passthrough its writes never reach the daemon.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !writable(flags) {
		fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
		if errno == 0 && n.fsys.cache {
			// Nothing to flush from a read-only handle; pages stay valid
			// (go-fuse drops KEEP_CACHE for a passthrough handle, whose
			// pages are the backing file's).
			fl |= fuse.FOPEN_NOFLUSH | fuse.FOPEN_KEEP_CACHE
		}
		return fh, fl, errno
	}
	rel, ok := n.rel()
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	release, err := n.fsys.hooks.WriterOpened(caller(ctx), rel)
	if err != nil {
		return nil, 0, refuse(err)
	}
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		release()
		return nil, 0, errno
	}
	return &handle{LoopbackFile: fh.(*fs.LoopbackFile), release: release}, fl, 0
}

// Create is always a writable open of a name that did not exist (the
// kernel sends OPEN for existing files), but a racing creator may have
// made it since: the pre-image is read from disk either way.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	rel, ok := n.child(name)
	if !ok {
		return nil, nil, 0, syscall.ENOENT
	}
	release, err := n.fsys.hooks.WriterOpened(caller(ctx), rel)
	if err != nil {
		return nil, nil, 0, refuse(err)
	}
	in, fh, fl, errno := n.LoopbackNode.Create(makerCtx(ctx), name, flags, mode, out)
	if errno != 0 {
		release()
		return nil, nil, 0, errno
	}
	n.callerGroup(ctx, name, out)
	n.handed(ctx, name, in)
	lf := fh.(*fs.LoopbackFile)
	if mode&0o7000 != 0 {
		// The loopback passes the mode through os.FileMode, which drops
		// setuid, setgid and sticky: put them back.
		if errno := fixMode(lf, mode, out); errno != 0 {
			return nil, nil, 0, errno
		}
	}
	return in, &handle{LoopbackFile: lf, release: release}, fl, 0
}

// handle is a writable file handle; releasing the last one on a path
// records the post-image.
type handle struct {
	*fs.LoopbackFile
	release func()
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	errno := h.LoopbackFile.Release(ctx)
	h.release()
	return errno
}

func fixMode(lf *fs.LoopbackFile, mode uint32, out *fuse.EntryOut) syscall.Errno {
	var a fuse.AttrOut
	in := &fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{Valid: fuse.FATTR_MODE, Mode: mode & 0o7777}}
	if errno := lf.Setattr(context.Background(), in, &a); errno != 0 {
		return errno
	}
	out.Attr = a.Attr
	return 0
}

// OpendirHandle lets the kernel cache a directory's listing when mounted
// in place: changes through the mount invalidate it, and a rewind
// invalidates the directories it changes (Invalidate).
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno == 0 && n.fsys.cache {
		fl |= fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	}
	return fh, fl, errno
}
