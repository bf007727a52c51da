package nohandle

import "github.com/hanwen/go-fuse/v2/fuse"

// Cap tells the kernel that OPENDIR may be answered with ENOSYS (Dirs):
// add it to the mount's ExtraCapabilities.
const Cap = fuse.CAP_NO_OPENDIR_SUPPORT
