package main

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// noOpenNode is a loopback node that answers OPEN with ENOSYS, so the
// kernel stops sending OPEN and RELEASE for regular files (no_open) and
// keeps their page cache across opens; reads and writes come without a
// handle and are served by path. It exists to measure that lever.
type noOpenNode struct{ *fs.LoopbackNode }

var (
	_ fs.NodeOpener = (*noOpenNode)(nil)
	_ fs.NodeReader = (*noOpenNode)(nil)
	_ fs.NodeWriter = (*noOpenNode)(nil)

	_ fs.NodeWrapChilder = (*noOpenNode)(nil)
)

// WrapChild makes every child a noOpenNode too.
func (n *noOpenNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &noOpenNode{ops.(*fs.LoopbackNode)}
}

func (n *noOpenNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, 0, syscall.ENOSYS
}

func (n *noOpenNode) backing() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

func (n *noOpenNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f != nil {
		return f.(fs.FileReader).Read(ctx, dest, off)
	}
	fd, err := syscall.Open(n.backing(), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	defer syscall.Close(fd)
	k, err := syscall.Pread(fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *noOpenNode) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if f != nil {
		return f.(fs.FileWriter).Write(ctx, data, off)
	}
	fd, err := syscall.Open(n.backing(), syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, fs.ToErrno(err)
	}
	defer syscall.Close(fd)
	k, err := syscall.Pwrite(fd, data, off)
	return uint32(k), fs.ToErrno(err)
}

var _ fs.NodeFlusher = (*noOpenNode)(nil)

// Flush answers ENOSYS too, so the kernel stops sending FLUSH at every
// close (no_flush).
func (n *noOpenNode) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}
