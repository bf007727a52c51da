package fusefs

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ckfs-dev/ckfs/internal/beneath"
	"github.com/ckfs-dev/ckfs/internal/nohandle"
	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The cached model (Options.Cached) serves a mount in place without file
// handles in the kernel: the first OPEN of a file is answered with ENOSYS,
// after which the kernel (FUSE_NO_OPEN_SUPPORT) opens files without a
// request, sends no RELEASE or FLUSH, and keeps each file's pages across
// opens. A warm `grep -r` then costs no request at all for a file whose
// attributes and pages the kernel holds.
//
// What that changes:
//   - Nothing is told of an open, so a pre-image is taken at the first
//     mutating request of a period (WRITE, SETATTR, FALLOCATE, and the
//     directory operations as before), and the post-image at the period's
//     end (a window boundary), as for every change made without a handle.
//   - READ, WRITE, FSYNC and FALLOCATE come without a handle (Fh 0). Each
//     is served through a descriptor opened for it by the node's path and
//     closed before the reply; its inode is checked against the node's, so
//     a rename racing the request never serves another file.
//   - A file unlinked or renamed over while the kernel still knows it may
//     still be open in some process, which will go on reading and writing
//     it with no path left to reach it by. Before such an unlink or rename
//     the node is pinned: the daemon opens its backing file and keeps the
//     descriptor until the kernel forgets the node.
//   - CREATE is answered with ENOSYS as well (the kernel would never
//     release its handle): the kernel makes new files with MKNOD.
//   - There is no kernel passthrough and no atomic O_TRUNC (the kernel
//     truncates with a SETATTR), and locks are the kernel's own (every
//     process that can take one goes through this kernel's mount).
//
// A kernel that does not offer FUSE_NO_OPEN_SUPPORT gets OPEN served as
// before, through the daemon.
type noOpen struct {
	nohandle.Files             // OPEN and handleless FLUSH answered with ENOSYS
	onMapped       func()      // Options.OnMappedWrite
	mapped         atomic.Bool // onMapped was called
}

// fromCache takes a write the kernel makes from its page cache (a shared
// memory mapping written back) as made by no process: the thread it names
// is whoever caused the writeback, not the one that dirtied the pages.
func (r *noOpen) fromCache(in *fuse.WriteIn) {
	if in.WriteFlags&fuse.WRITE_CACHE == 0 {
		return
	}
	in.Caller.Pid = 0
	if r.onMapped != nil && !r.mapped.Load() && r.mapped.CompareAndSwap(false, true) {
		r.onMapped()
	}
}

// Create is answered with ENOSYS too: once files open without a request,
// the kernel sends no RELEASE for a handle that CREATE made either, so
// such a handle would never be released. The kernel then makes new files
// with MKNOD and opens them without a request, as any other.
func (r *noOpen) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if !r.Offered() {
		return r.RawFileSystem.Create(cancel, in, name, out)
	}
	return fuse.ENOSYS
}

func (r *noOpen) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	r.fromCache(in)
	return r.RawFileSystem.Writev(cancel, in, data)
}

func (r *noOpen) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	r.fromCache(in)
	return r.RawFileSystem.Write(cancel, in, data)
}

// pinned is a node's backing file kept open once no path may lead to it.
// Every unlink of a file the kernel knows pins it, and few pinned files are
// ever used again: the handle the loopback's Getattr and Setattr take is
// made on first use (an os.File costs a system call and a finalizer).
type pinned struct {
	fd   int // the pinned descriptor
	once sync.Once
	lf   *fs.LoopbackFile // fd as a handle, once asked for
}

// handle returns the pinned file as a loopback handle, which then owns fd.
func (p *pinned) handle() *fs.LoopbackFile {
	p.once.Do(func() { p.lf = fs.NewLoopbackFileFromOS(os.NewFile(uintptr(p.fd), "pinned")) })
	return p.lf
}

// close closes the pinned file; nothing may use it after.
func (p *pinned) close() {
	made := false
	p.once.Do(func() { made = true }) // no handle can be made from here on
	if made {
		unix.Close(p.fd)
		return
	}
	p.lf.Release(context.Background())
}

// pins are the pinned files, by node. They live beside the nodes, not in
// them: most nodes are never pinned, and every node the kernel knows
// costs memory while it knows it.
type pins struct {
	count atomic.Int64 // how many: while none, no lookup is made
	m     sync.Map     // *node → *pinned
}

// of returns n's pinned file, or nil.
func (p *pins) of(n *node) *pinned {
	if p.count.Load() == 0 {
		return nil
	}
	if v, ok := p.m.Load(n); ok {
		return v.(*pinned)
	}
	return nil
}

// add pins v for n, unless n is pinned already; it says whether it did.
func (p *pins) add(n *node, v *pinned) bool {
	p.count.Add(1) // first, so that of never skips a stored pin
	if _, loaded := p.m.LoadOrStore(n, v); loaded {
		p.count.Add(-1)
		return false
	}
	return true
}

// drop unpins n and returns what was pinned, or nil.
func (p *pins) drop(n *node) *pinned {
	if p.count.Load() == 0 {
		return nil
	}
	v, ok := p.m.LoadAndDelete(n)
	if !ok {
		return nil
	}
	p.count.Add(-1)
	return v.(*pinned)
}

// pinnedFd returns the node's pinned descriptor, or -1.
func (n *node) pinnedFd() int {
	if p := n.fsys.pins.of(n); p != nil {
		return p.fd
	}
	return -1
}

// OnForget closes the node's pinned file: the kernel holds no reference
// to the node any more, so no request can name it.
func (n *node) OnForget() {
	n.fsys.journal.add('F', n.fsys.nodeID(n.EmbeddedInode()), 0, 0, 0, "")
	if p := n.fsys.pins.drop(n); p != nil {
		p.close()
	}
	n.fsys.wfds.forget(n)
}

// writable returns a descriptor to write n's backing file through for one
// request: the pinned one, a kept one (writefd.go), or one by path.
func (n *node) writable() (int, func(), syscall.Errno) {
	if fd := n.pinnedFd(); fd >= 0 {
		return fd, noop, 0
	}
	if fd, done, errno := n.fsys.wfds.acquire(n); errno == 0 {
		return fd, done, 0
	}
	return n.backing(unix.O_WRONLY)
}

// pinChild pins the regular file name in directory n, if the kernel knows
// it, before it is unlinked or renamed over (see noOpen).
func (n *node) pinChild(name string) {
	if !n.fsys.noOpen {
		return
	}
	ch := n.GetChild(name)
	if ch == nil || ch.StableAttr().Mode&syscall.S_IFMT != syscall.S_IFREG {
		return
	}
	c, ok := ch.Operations().(*node)
	if !ok {
		return
	}
	if c.fsys.pins.of(c) != nil {
		return
	}
	fd, same, errno := c.openByPath(unix.O_RDWR)
	if errno == syscall.EACCES || errno == syscall.EPERM || errno == syscall.ETXTBSY || errno == syscall.EROFS {
		fd, same, errno = c.openByPath(unix.O_RDONLY)
	}
	if errno != 0 {
		return
	}
	if !same {
		unix.Close(fd) // not the node's file (replaced behind the mount)
		return
	}
	if !c.fsys.pins.add(c, &pinned{fd: fd}) {
		unix.Close(fd) // pinned meanwhile by a racing unlink or rename
	}
}

// openByPath opens the node's backing file by its path beneath the root,
// and says whether the file it reached is the node's: it is not when a
// rename moved another file there meanwhile (and then the node is pinned,
// see backing), or when the file was replaced behind the mount.
func (n *node) openByPath(flags int) (int, bool, syscall.Errno) {
	rel, ok := n.rel()
	if !ok || rel == "" {
		return -1, false, syscall.ESTALE
	}
	fd, err := beneath.Open(n.fsys.rootFd, rel, flags)
	if err != nil {
		return -1, false, fs.ToErrno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, false, fs.ToErrno(err)
	}
	return fd, n.fsys.inoOf(&st) == n.StableAttr().Ino, 0
}

// inoOf is the node id the loopback gives a backing file (its inode
// number, with the device mixed in as go-fuse's loopback does).
func (f *FS) inoOf(st *unix.Stat_t) uint64 {
	swapped := (uint64(st.Dev) << 32) | (uint64(st.Dev) >> 32)
	swappedRootDev := (f.dev << 32) | (f.dev >> 32)
	return (swapped ^ swappedRootDev) ^ st.Ino
}

// backing returns a descriptor of the node's backing file for one request
// made without a handle, and the func that ends its use: the pinned one,
// or one opened by path (tried again if a rename moved the path meanwhile).
func (n *node) backing(flags int) (int, func(), syscall.Errno) {
	for range 3 {
		if fd := n.pinnedFd(); fd >= 0 {
			// A pinned descriptor stays open until the node is forgotten,
			// and no request names a forgotten node.
			return fd, noop, 0
		}
		fd, same, errno := n.openByPath(flags)
		switch {
		case errno == syscall.ESTALE || errno == syscall.ENOENT:
			continue // renamed or unlinked meanwhile: look again
		case errno != 0:
			return -1, nil, errno
		case !same && n.pinnedFd() >= 0:
			unix.Close(fd) // renamed over meanwhile: the pin has it
			continue
		}
		// Another file than the node's, with no pin: it was replaced
		// behind the mount, where the name now leads (as a new open of
		// the name would reach it).
		return fd, func() { unix.Close(fd) }, 0
	}
	return -1, nil, syscall.ESTALE
}

func noop() {}

// Read serves a read with no handle from the backing file.
func (n *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		return f.(fs.FileReader).Read(ctx, dest, off)
	}
	fd, done, errno := n.backing(unix.O_RDONLY)
	if errno != 0 {
		return nil, errno
	}
	defer done()
	k, err := unix.Pread(fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// Write serves a write with no handle: the pre-image first, as for every
// change, then the bytes.
func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if f != nil {
		return f.(fs.FileWriter).Write(ctx, data, off)
	}
	if rel, ok := n.rel(); ok && rel != "" {
		done, err := n.fsys.hooks.BeginChange(caller(ctx), rel)
		if err != nil {
			return 0, refuse(err)
		}
		defer done()
	}
	fd, done, errno := n.writable()
	if errno != 0 {
		return 0, errno
	}
	defer done()
	k, err := unix.Pwrite(fd, data, off)
	if err != nil {
		return uint32(max(k, 0)), fs.ToErrno(err)
	}
	return uint32(k), 0
}

// Fsync makes a file written without a handle durable.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if f != nil {
		if fs2, ok := f.(fs.FileFsyncer); ok {
			return fs2.Fsync(ctx, flags)
		}
		return syscall.ENOTSUP
	}
	fd, done, errno := n.backing(unix.O_RDONLY)
	if errno != 0 {
		return errno
	}
	defer done()
	return fs.ToErrno(fsync(fd, flags&1 != 0))
}

// Flush has nothing to do without a handle (no close-time error to
// report: every write was already made).
func (n *node) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	if f != nil {
		if fl, ok := f.(fs.FileFlusher); ok {
			return fl.Flush(ctx)
		}
	}
	return 0
}

// Allocate serves fallocate with no handle, a change like a write.
func (n *node) Allocate(ctx context.Context, f fs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	if f != nil {
		if a, ok := f.(fs.FileAllocater); ok {
			return a.Allocate(ctx, off, size, mode)
		}
		return syscall.ENOTSUP
	}
	if rel, ok := n.rel(); ok && rel != "" {
		done, err := n.fsys.hooks.BeginChange(caller(ctx), rel)
		if err != nil {
			return refuse(err)
		}
		defer done()
	}
	fd, done, errno := n.writable()
	if errno != 0 {
		return errno
	}
	defer done()
	return fs.ToErrno(fallocate(fd, mode, int64(off), int64(size)))
}

// pinnedFile is the pinned file as a handle the loopback's Getattr and
// Setattr take, or nil. It is never released: the pin owns it.
func (n *node) pinnedFile() fs.FileHandle {
	if p := n.fsys.pins.of(n); p != nil {
		if lf := p.handle(); lf != nil { // nil once closed
			return lf
		}
	}
	return nil
}

// Getattr of a node with no path left (unlinked while the kernel knows
// it) is its pinned file's.
func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if f == nil {
		if _, ok := n.rel(); !ok {
			if pf := n.pinnedFile(); pf != nil {
				return pf.(fs.FileGetattrer).Getattr(ctx, out)
			}
		}
	}
	return n.LoopbackNode.Getattr(ctx, unwrap(f), out)
}
