// Package pastfs serves a checkpoint's tree read-only through FUSE: a view
// of the past next to the present. The tree (provenance.Tree) is built
// once; file content comes from a Source as it is read. Nothing in a view
// can be written (the mount is read-only: EROFS), and a path the timeline
// cannot vouch for is listed but cannot be read (EIO), never guessed.
//
// Everything in a view is immutable, so the kernel may cache all of it:
// entries and attributes never expire, files and directories are opened
// without a request (FUSE_NO_OPEN_SUPPORT, FUSE_NO_OPENDIR_SUPPORT),
// keeping their pages and listings, and no FLUSH is asked for; a warm
// search of a view sends the server no request.
package pastfs

import (
	"context"
	"fmt"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/nohandle"
	"github.com/ckfs-dev/ckfs/provenance"
	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Source reads the content of a tree's file or symlink: the whole of it.
// It is called as the file is read, so it must check that what it reads
// is what the entry names (a live file changed since the tree was built
// is an error, never served).
type Source interface {
	Content(e provenance.TreeEntry) ([]byte, error)
}

// Options describe a view's mount.
type Options struct {
	Name  string // shown as the mount's source (in /proc/mounts)
	Debug bool
}

// Mount serves tree read-only at dir and returns when the mount is live.
func Mount(dir string, tree []provenance.TreeEntry, src Source, o Options) (*fuse.Server, error) {
	forever := 365 * 24 * time.Hour
	root := &dirNode{}
	v := &view{src: src, cache: newContentCache(64 << 20)}
	root.build = func(ctx context.Context) { v.build(ctx, root, tree) }
	opts := &fs.Options{
		EntryTimeout:    &forever,
		AttrTimeout:     &forever,
		NegativeTimeout: &forever,
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName:            o.Name,
			Name:              "ckfs-view",
			Options:           []string{"ro", "default_permissions"},
			DirectMount:       true,
			Debug:             o.Debug,
			ExtraCapabilities: fuse.CAP_NO_OPEN_SUPPORT | fuse.CAP_CACHE_SYMLINKS,
			MaxBackground:     64,
		},
	}
	opts.MountOptions.ExtraCapabilities |= nohandle.Cap
	raw := &readOnly{nohandle.Files{RawFileSystem: &nohandle.Dirs{RawFileSystem: fs.NewNodeFS(root, opts)}}}
	srv, err := fuse.NewServer(raw, dir, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("mount a view at %s: %w", dir, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		srv.Unmount()
		return nil, fmt.Errorf("mount a view at %s: %w", dir, err)
	}
	return srv, nil
}

// view is what every node of one mount shares.
type view struct {
	src   Source
	cache *contentCache
}

// build adds every entry of tree under root; tree is sorted by path, so
// a directory comes before what it holds.
func (v *view) build(ctx context.Context, root *dirNode, tree []provenance.TreeEntry) {
	dirs := map[string]*fs.Inode{"": &root.Inode}
	for _, e := range tree {
		dir, name := path.Split(e.Path)
		parent := dirs[strings.TrimSuffix(dir, "/")]
		if parent == nil {
			continue // under something that is not a directory in the tree
		}
		var node fs.InodeEmbedder
		mode := uint32(0)
		switch e.State.Type {
		case index.TypeDir:
			node, mode = &dirNode{attr: attrOf(e)}, syscall.S_IFDIR
		case index.TypeSymlink:
			node, mode = &linkNode{entryNode{entry: e, view: v}}, syscall.S_IFLNK
		case index.TypeFile:
			node, mode = &fileNode{entryNode{entry: e, view: v}}, syscall.S_IFREG
		case index.TypeFIFO:
			node, mode = &entryNode{entry: e, view: v}, syscall.S_IFIFO
		default:
			continue // sockets and devices are not part of a view
		}
		in := parent.NewPersistentInode(ctx, node, fs.StableAttr{Mode: mode})
		parent.AddChild(name, in, false)
		if e.State.Type == index.TypeDir {
			dirs[e.Path] = in
		}
	}
}

// attrOf is an entry's attributes as stat shows them (mode bits, size,
// times; owned by whoever serves the view).
func attrOf(e provenance.TreeEntry) fuse.Attr {
	a := fuse.Attr{Mode: e.State.Mode & 0o7777, Size: uint64(e.State.Size), Nlink: 1}
	if e.From == provenance.Unavailable {
		// Mode 0, and a size the kernel must read (a read fails): a file
		// of size 0 would read as empty without asking.
		a.Mode, a.Size = 0, max(a.Size, 1)
	}
	t := time.Unix(0, e.State.MTime)
	a.SetTimes(&t, &t, &t)
	return a
}

type dirNode struct {
	fs.Inode
	attr  fuse.Attr
	build func(context.Context) // the root's: adds the tree
}

var _ = (fs.NodeOnAdder)((*dirNode)(nil))

func (n *dirNode) OnAdd(ctx context.Context) {
	if n.build != nil {
		n.build(ctx)
	}
}

func (n *dirNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if n.build != nil {
		out.Mode = 0o555
		return 0
	}
	out.Attr = n.attr
	out.Mode = n.attr.Mode
	return 0
}

// entryNode is a node of the tree other than a directory: its attributes
// are its entry's (a symlink's mode shows as 0777, as stat shows one).
type entryNode struct {
	fs.Inode
	entry provenance.TreeEntry
	view  *view
}

func (n *entryNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Attr = attrOf(n.entry)
	if n.entry.State.Type == index.TypeSymlink {
		out.Mode = 0o777
	}
	return 0
}

type linkNode struct{ entryNode }

func (n *linkNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	if n.entry.From == provenance.Unavailable {
		return nil, syscall.EIO
	}
	b, err := n.view.src.Content(n.entry)
	if err != nil {
		return nil, syscall.EIO
	}
	return b, 0
}

type fileNode struct{ entryNode }

// Open is reached only where the kernel does not open without a request.
func (n *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if n.entry.From == provenance.Unavailable {
		return nil, 0, syscall.EIO
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *fileNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if n.entry.From == provenance.Unavailable {
		return nil, syscall.EIO
	}
	b, err := n.view.cache.get(n, func() ([]byte, error) { return n.view.src.Content(n.entry) })
	if err != nil {
		return nil, syscall.EIO
	}
	if off >= int64(len(b)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(b[off:min(int64(len(b)), off+int64(len(dest)))]), 0
}

// readOnly is a view's raw file system: files and directories without
// kernel handles (nohandle), and LSEEK answered with ENOSYS (the kernel
// then finds data and holes itself: a view's files have none).
type readOnly struct {
	nohandle.Files
}

func (r *readOnly) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	return fuse.ENOSYS
}

// GetXAttr answers ENOSYS: a view keeps no extended attributes, and the
// kernel then answers every later getxattr on the view itself
// (EOPNOTSUPP) instead of asking for each file's ACL and security label,
// as ls -l does. Their list stays an empty one, which tools that copy
// attributes (rsync -X) take without complaint.
func (r *readOnly) GetXAttr(cancel <-chan struct{}, header *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	return 0, fuse.ENOSYS
}
