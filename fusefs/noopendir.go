package fusefs

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// noOpendir serves a mount in place without directory handles in the
// kernel: it answers the first OPENDIR with ENOSYS, after which the
// kernel (FUSE_NO_OPENDIR_SUPPORT) opens directories without a request,
// sends no RELEASEDIR, and keeps every listing in its cache
// (FOPEN_KEEP_CACHE and FOPEN_CACHE_DIR are its defaults then, which is
// what OpendirHandle asks for in place anyway). That saves two round
// trips for every directory a tool opens (find, git status, rg).
//
// The requests that still come name no handle (Fh 0): READDIR and
// READDIRPLUS when the kernel fills or refills its cache, and FSYNCDIR.
// Each is served through a handle of the daemon's own, opened at the
// offset the kernel asks for and released before the reply: the node
// code serves them exactly as it serves a handle the kernel holds.
//
// Directory listings are cached only where every change goes through the
// mount or is a rewind, which invalidates what it changes; a mount
// elsewhere keeps OPENDIR (changes behind it must show).
type noOpendir struct {
	fuse.RawFileSystem
}

func (r noOpendir) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	return fuse.ENOSYS
}

func (r noOpendir) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.withHandle(cancel, &in.InHeader, &in.Fh, func() fuse.Status {
		return r.RawFileSystem.ReadDir(cancel, in, out)
	})
}

func (r noOpendir) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.withHandle(cancel, &in.InHeader, &in.Fh, func() fuse.Status {
		return r.RawFileSystem.ReadDirPlus(cancel, in, out)
	})
}

func (r noOpendir) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return r.withHandle(cancel, &in.InHeader, &in.Fh, func() fuse.Status {
		return r.RawFileSystem.FsyncDir(cancel, in)
	})
}

// withHandle runs serve with *fh set to a directory handle of the
// daemon's own when the kernel sent none, and releases it afterwards.
func (r noOpendir) withHandle(cancel <-chan struct{}, h *fuse.InHeader, fh *uint64, serve func() fuse.Status) fuse.Status {
	if *fh != 0 {
		return serve()
	}
	var out fuse.OpenOut
	open := fuse.OpenIn{InHeader: *h, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}
	if st := r.RawFileSystem.OpenDir(cancel, &open, &out); !st.Ok() {
		return st
	}
	*fh = out.Fh
	defer func() {
		r.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: *h, Fh: out.Fh})
		*fh = 0
	}()
	return serve()
}
