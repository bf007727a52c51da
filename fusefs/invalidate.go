package fusefs

import "strings"

// Invalidate drops what the kernel caches about rel (its directory entry,
// attributes and pages, and its directory's listing), after the backing directory was changed behind
// the mount (a rewind). Paths the kernel never looked up have nothing
// cached and are skipped. Must not be called from inside a FUSE operation.
func (f *FS) Invalidate(rel string) {
	parent := f.root.EmbeddedInode()
	elems := strings.Split(rel, "/")
	for i, name := range elems {
		child := parent.GetChild(name)
		if i == len(elems)-1 {
			parent.NotifyEntry(name)
			parent.NotifyContent(0, 0) // the directory's cached listing
			if child != nil {
				child.NotifyContent(0, 0)
			}
			return
		}
		if child == nil {
			return
		}
		parent = child
	}
}
