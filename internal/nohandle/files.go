package nohandle

import (
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Files serves files without kernel handles: where the kernel offers
// FUSE_NO_OPEN_SUPPORT, the first OPEN is answered with ENOSYS, after
// which the kernel opens files without a request, sends no RELEASE, and
// keeps each file's pages across opens; READ and the other requests then
// name no handle (Fh 0), and the node serves them itself. FLUSH for a
// file without a handle is answered with ENOSYS as well, so the kernel
// stops sending one at every close: there is nothing to flush. A kernel
// that does not offer it gets OPEN served as before.
type Files struct {
	fuse.RawFileSystem
	offered func() bool
}

func (r *Files) Init(s *fuse.Server) {
	r.offered = sync.OnceValue(func() bool {
		return s.KernelSettings().Flags64()&fuse.CAP_NO_OPEN_SUPPORT != 0
	})
	r.RawFileSystem.Init(s)
}

// Offered reports whether the kernel opens files without a request.
func (r *Files) Offered() bool { return r.offered() }

func (r *Files) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if !r.offered() {
		return r.RawFileSystem.Open(cancel, in, out)
	}
	return fuse.ENOSYS
}

func (r *Files) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if in.Fh == 0 && r.offered() {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Flush(cancel, in)
}
