// Package fusefs is ckfs's FUSE passthrough. It wraps go-fuse's loopback
// nodes: reads, lookups and directory listings are forwarded untouched and
// never captured; before any mutating operation reaches the backing
// directory it calls the capture hooks, and refuses the operation with EIO
// if the pre-image could not be taken. No policy lives here.
//
// Serving. The backing directory is opened (O_PATH) before mounting and
// served through that descriptor, so the repository directory itself can
// be the mountpoint (mount in place) without the daemon ever resolving a
// path through its own mount: as /proc/self/fd/N, or, in the ckfs daemon
// process (one mount per process), from the process's working directory
// moved onto it (ServeFromCwd), which spares every path a procfs lookup.
//
// Caching. Writable opens take their pre-image at open time, so kernel
// passthrough (go-fuse's backing files) is safe for every handle: reads and
// writes then run at the backing filesystem's speed and never reach the
// daemon. Mounted in place, ckfs is the only path to the files, so entry
// and attribute timeouts are long; rewinds invalidate what they change.
// With a separate mountpoint the backing directory stays reachable
// directly, so the timeouts are short.
package fusefs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/internal/nohandle"
	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Hooks is what the passthrough asks before a mutation reaches the disk.
// *capture.Recorder implements it. Paths are relative to the root; pid is
// the calling thread as the kernel reports it (0 when unknown).
type Hooks interface {
	// BeginChange takes the pre-image of rel before a change; done is
	// called once the change has reached the disk (or failed), and a
	// window boundary waits for it.
	BeginChange(pid uint32, rel string) (done func(), err error)
	BeginRename(pid uint32, src, dst string, exchange bool) (done func(), err error)
	// WriterOpened takes the pre-image for a writable open; release is
	// called once when the handle is released.
	WriterOpened(pid uint32, rel string) (release func(), err error)
	Renamed(oldRel, newRel string, exchange bool)
}

// caller is the thread id of the request's caller, 0 when unknown.
func caller(ctx context.Context) uint32 {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Pid
	}
	return 0
}

// Options configure a mount.
type Options struct {
	// InPlace is true when the mountpoint is the backing directory itself.
	InPlace bool
	// AllowOther lets other users see the mount (off by default).
	AllowOther bool
	// Debug logs every FUSE request.
	Debug bool
	// NoPassthrough turns kernel passthrough off (for benchmarks).
	NoPassthrough bool
	// Cached serves a mount in place with files opened by the kernel
	// alone, no request per open, their pages kept across opens (the
	// cached model, noopen.go); without it every open is a request and
	// gets kernel passthrough. A mount elsewhere is never cached.
	Cached bool
	// Source is the mount's source as /proc/self/mountinfo shows it
	// ("ckfs" when empty): the daemon names its store there, so any
	// process can tell which store serves a mounted path.
	Source string
	// AfterDirOp, if set, is called once a directory operation (mkdir,
	// mknod, symlink, link, unlink, rmdir, rename) is carried out, before
	// its reply; tests kill the daemon there (testhooks.AfterDirOp).
	AfterDirOp func(op string)
	// OnMappedWrite, if set, is called (once) at the first write the
	// kernel makes from its page cache (a shared memory mapping written
	// back): boundary clients then look for mappings to wait for
	// (internal/mapped), which costs them nothing on a mount that has
	// never had one.
	OnMappedWrite func()
}

// FS is a mounted (or mountable) ckfs passthrough.
type FS struct {
	hooks  Hooks
	rootFd int
	root   *node
	// cache lets the kernel keep file pages and directory listings across
	// opens (mounted in place: every change goes through the mount, or is
	// a rewind, which invalidates what it wrote).
	cache bool
	// noOpen is the cached model: files are opened without a request.
	noOpen bool
	// dev is the backing root's device (node ids mix it in).
	dev uint64
	// model says how the mount serves files (Model).
	model string
	// wfds keeps the cached model's write descriptors open (writefd.go).
	wfds writeFds
	// pins holds the files of nodes unlinked while known (noopen.go).
	pins pins
	// gate holds directory operations back while an upgrade retires the
	// daemon (drain.go); nil when no successor can take over.
	gate *opGate
	// journal records the node ids handed to the kernel, for a successor
	// daemon (nodejournal.go); nil when none is kept.
	journal *nodeJournal
	// restoring is set while a takeover registers the kernel's nodes,
	// before the mount is served.
	restoring bool
}

// KeepNodeJournal makes f record in j (OpenNodeJournal) the node ids it
// hands the kernel, so that a successor daemon can take the mount over.
// It must be called before the mount is served.
func (f *FS) KeepNodeJournal(j *os.File) { f.journal = &nodeJournal{f: j} }

// CloseWriteFds closes the descriptors kept open for writes made without
// a handle, once no request uses them (at a boundary, and at unmount).
func (f *FS) CloseWriteFds() { f.wfds.closeAll() }

// New returns the passthrough of the directory open at rootFd (O_PATH is
// enough). The caller keeps rootFd open while the file system is served.
// rootPath is the directory's path, used only where /proc is missing.
func New(rootFd int, rootPath string, hooks Hooks) (*FS, error) {
	lr, err := fs.NewLoopbackRoot(servePath(rootFd, rootPath))
	if err != nil {
		return nil, fmt.Errorf("serve directory fd %d: %w", rootFd, err)
	}
	rd := lr.(*fs.LoopbackNode).RootData
	f := &FS{hooks: hooks, rootFd: rootFd, dev: rd.Dev}
	f.root = &node{LoopbackNode: fs.LoopbackNode{RootData: rd}, fsys: f}
	rd.RootNode = f.root
	// Every node the kernel knows costs memory while it knows it: one
	// allocation a node (144 bytes) rather than the loopback's node and a
	// wrapper around it (NodeWrapChilder, the field's replacement: 176).
	//lint:ignore SA1019 NodeWrapChilder costs a second allocation a node
	rd.NewNode = func(rd *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: rd}, fsys: f}
	}
	return f, nil
}

// Root returns the root node, for fs.Mount or tests.
func (f *FS) Root() fs.InodeEmbedder { return f.root }

// Mount serves f at mountpoint and returns when the mount is live.
func (f *FS) Mount(mountpoint string, o Options) (*fuse.Server, error) {
	opts, raw := f.server(o)
	srv, err := fuse.NewServer(raw, mountpoint, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	residentReadBuffers(srv) // an error leaves go-fuse's own buffers: TestResidentReadBuffers guards it
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	f.setModel(o, srv)
	return srv, nil
}

// server is what serving f as o says takes: go-fuse's options, and the
// file system the server is given.
func (f *FS) server(o Options) (*fs.Options, fuse.RawFileSystem) {
	long, short := time.Hour, time.Second
	timeout := short
	if o.InPlace {
		timeout = long
	}
	f.cache = o.InPlace
	opts := &fs.Options{
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		// Modes are reported exactly: a file created 0000 is 0000.
		NullPermissions: true,
		// Node ids are the backing files' inode numbers, so that a
		// successor daemon hands out the ids the kernel holds
		// (nodejournal.go).
		ExternalNodeID: f.journal != nil,
		MountOptions: fuse.MountOptions{
			FsName:     cmp.Or(o.Source, "ckfs"),
			Name:       "ckfs",
			AllowOther: o.AllowOther,
			// The daemon may run as root: without the kernel's own
			// permission checks every caller would get its rights.
			Options:     []string{"default_permissions"},
			DirectMount: true,
			Debug:       o.Debug,
			// Pre-images of truncating opens are taken at open time
			// either way; atomic O_TRUNC saves a SETATTR round trip.
			ExtraCapabilities: fuse.CAP_ATOMIC_O_TRUNC,
			MaxBackground:     64,
			EnableLocks:       true,
			// Mounted in place the kernel holds the only view of the
			// tree, so it may cache each inode's POSIX ACLs (as it
			// caches attributes): ls -l asks every file for its ACL,
			// and a cached one costs no request. The kernel then also
			// honours ACLs in its permission checks.
			EnableAcl: o.InPlace,
		},
	}
	f.noOpen = o.InPlace && o.Cached
	if o.NoPassthrough || f.noOpen {
		opts.MountOptions.DisabledCapabilities = fuse.CAP_PASSTHROUGH
	}
	if f.noOpen {
		// The kernel must truncate with a SETATTR (no OPEN carries
		// O_TRUNC), and takes locks itself (no handle to lock through).
		opts.MountOptions.ExtraCapabilities = fuse.CAP_NO_OPEN_SUPPORT
		opts.MountOptions.EnableLocks = false
		// Writes come through the daemon: 1 MiB a request rather than
		// 128 KiB (a request costs a round trip; the copy is the same).
		opts.MountOptions.MaxWrite = 1 << 20
	}
	raw := fs.NewNodeFS(f.root, opts)
	if o.InPlace {
		raw = &nohandle.Dirs{RawFileSystem: raw}
		opts.MountOptions.ExtraCapabilities |= nohandle.Cap
	}
	if f.noOpen {
		raw = &noOpen{Files: nohandle.Files{RawFileSystem: raw}, onMapped: o.OnMappedWrite}
	}
	if f.journal != nil {
		// A successor may be asked again for what this daemon did.
		f.gate = newOpGate()
		raw = &resent{RawFileSystem: raw, gate: f.gate, after: o.AfterDirOp, journal: f.journal}
	}
	return opts, raw
}

// setModel says, once srv serves, how the mount serves files.
func (f *FS) setModel(o Options, srv *fuse.Server) {
	offered := srv.KernelSettings().Flags64()&fuse.CAP_NO_OPEN_SUPPORT != 0
	switch {
	case !o.InPlace:
		f.model = "every open is a request (a separate mountpoint: changes made behind it must show)"
	case f.noOpen && offered:
		f.model = "cached: files open without a request and their pages stay in the kernel (capture.io = cached)"
	case f.noOpen:
		f.model = "cached was asked for, but this kernel cannot open files without a request: every open and read goes through the daemon (capture.io = passthrough is faster here)"
	case o.NoPassthrough:
		f.model = "every open is a request, without kernel passthrough"
	default:
		f.model = "passthrough: every open is a request, large reads and writes bypass the daemon (capture.io = passthrough)"
	}
}

// Model says how the mount serves files, for ckfs doctor.
func (f *FS) Model() string { return f.model }

// node is a loopback node whose mutating operations call the hooks first.
type node struct {
	fs.LoopbackNode
	fsys *FS
}

// rel returns the node's path relative to the root, and false if the node
// is no longer reachable (deleted while open).
func (n *node) rel() (string, bool) {
	root := n.fsys.root.EmbeddedInode()
	var parts []string
	for in := n.EmbeddedInode(); in != root; {
		name, parent := in.Parent()
		if parent == nil {
			return "", false
		}
		parts = append(parts, name)
		in = parent
	}
	if len(parts) == 0 {
		return "", true
	}
	size := len(parts) - 1
	for _, p := range parts {
		size += len(p)
	}
	b := make([]byte, 0, size)
	for i := len(parts) - 1; i >= 0; i-- {
		b = append(b, parts[i]...)
		if i > 0 {
			b = append(b, '/')
		}
	}
	return string(b), true
}

// child returns the relative path of name in directory n.
func (n *node) child(name string) (string, bool) {
	dir, ok := n.rel()
	if !ok {
		return "", false
	}
	if dir == "" {
		return name, true
	}
	return dir + "/" + name, true
}

// refuse turns a capture failure into the errno the caller sees: the
// operation did not happen because its pre-image could not be saved. A
// full store disk reads as a full disk (ENOSPC), which every tool already
// knows how to report; anything else is an I/O error.
func refuse(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return syscall.ENOSPC
	}
	return syscall.EIO
}
