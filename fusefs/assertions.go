package fusefs

import "github.com/hanwen/go-fuse/v2/fs"

// Every operation the passthrough intercepts, checked at compile time. The
// rest are the loopback's, promoted unchanged.
var (
	_ fs.NodeOpener          = (*node)(nil)
	_ fs.NodeCreater         = (*node)(nil)
	_ fs.NodeMkdirer         = (*node)(nil)
	_ fs.NodeMknoder         = (*node)(nil)
	_ fs.NodeRmdirer         = (*node)(nil)
	_ fs.NodeUnlinker        = (*node)(nil)
	_ fs.NodeSymlinker       = (*node)(nil)
	_ fs.NodeLinker          = (*node)(nil)
	_ fs.NodeRenamer         = (*node)(nil)
	_ fs.NodeSetattrer       = (*node)(nil)
	_ fs.NodeSetxattrer      = (*node)(nil)
	_ fs.NodeRemovexattrer   = (*node)(nil)
	_ fs.NodeCopyFileRanger  = (*node)(nil)
	_ fs.FileReleaser        = (*handle)(nil)
	_ fs.FilePassthroughFder = (*handle)(nil)
	_ fs.FileAllocater       = (*handle)(nil)
)
