// Package nohandle serves FUSE files and directories without kernel
// handles: the first OPEN and OPENDIR are answered with ENOSYS
// (FUSE_NO_OPEN_SUPPORT, FUSE_NO_OPENDIR_SUPPORT), so the kernel opens
// them without a request and keeps their pages and listings. Both ckfs's
// passthrough mounted in place and its read-only views use it.
package nohandle

import (
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Dirs serves a mount in place without directory handles in the
// kernel: it answers the first OPENDIR with ENOSYS, after which the
// kernel (FUSE_NO_OPENDIR_SUPPORT) opens directories without a request,
// sends no RELEASEDIR, and keeps every listing in its cache
// (FOPEN_KEEP_CACHE and FOPEN_CACHE_DIR are its defaults then, which is
// what OpendirHandle asks for in place anyway). That saves two round
// trips for every directory a tool opens (find, git status, rg). A kernel
// that does not offer it (before Linux 5.1) would fail every opendir with
// ENOSYS instead, so there OPENDIR is served as before.
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
type Dirs struct {
	fuse.RawFileSystem
	// offered says whether the kernel offered FUSE_NO_OPENDIR_SUPPORT at
	// INIT, which is over before the first OPENDIR.
	offered func() bool
}

func (r *Dirs) Init(s *fuse.Server) {
	r.offered = sync.OnceValue(func() bool {
		return s.KernelSettings().Flags64()&Cap != 0
	})
	r.RawFileSystem.Init(s)
}

func (r *Dirs) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if !r.offered() {
		return r.RawFileSystem.OpenDir(cancel, in, out)
	}
	return fuse.ENOSYS
}

func (r *Dirs) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if in.Fh == 0 {
		if st := r.open(cancel, &in.InHeader, &in.Fh); !st.Ok() {
			return st
		}
		defer r.release(&in.InHeader, &in.Fh)
	}
	return r.RawFileSystem.ReadDir(cancel, in, out)
}

func (r *Dirs) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if in.Fh == 0 {
		if st := r.open(cancel, &in.InHeader, &in.Fh); !st.Ok() {
			return st
		}
		defer r.release(&in.InHeader, &in.Fh)
	}
	return r.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (r *Dirs) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if in.Fh == 0 {
		if st := r.open(cancel, &in.InHeader, &in.Fh); !st.Ok() {
			return st
		}
		defer r.release(&in.InHeader, &in.Fh)
	}
	return r.RawFileSystem.FsyncDir(cancel, in)
}

// open sets *fh to a directory handle of the daemon's own for the node
// h names.
func (r *Dirs) open(cancel <-chan struct{}, h *fuse.InHeader, fh *uint64) fuse.Status {
	in := fuse.OpenIn{InHeader: *h, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}
	var out fuse.OpenOut
	st := r.RawFileSystem.OpenDir(cancel, &in, &out)
	if st.Ok() {
		*fh = out.Fh
	}
	return st
}

// release releases the handle open set, and clears *fh again.
func (r *Dirs) release(h *fuse.InHeader, fh *uint64) {
	r.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: *h, Fh: *fh})
	*fh = 0
}
