// Package mapped writes back what processes have written into shared
// memory mappings of files on one file system, and waits for it.
//
// On a FUSE mount a page written through a shared mapping reaches the
// daemon as a WRITE only when the kernel writes it back, and syncfs does
// not wait for that WRITE to be answered (the kernel passes syncfs on
// only for block-device and virtio FUSE connections); fsync of the file
// does. So before a window boundary the client finds the files processes
// near it hold mapped shared and writable on the mount, and fsyncs each:
// a page dirtied through a mapping that outlives the tool call then
// belongs to the window it was written in.
//
// A file that was mapped and closed needs none of this: its last close
// writes its pages back and waits.
package mapped
