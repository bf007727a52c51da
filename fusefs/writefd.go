package fusefs

import (
	"container/list"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeFds keeps the descriptors that the cached model's WRITEs go
// through open across requests, for the most recently written files. A
// descriptor opened and closed for every WRITE costs more than the open: on
// ext4, the close of a descriptor that wrote to a file truncated before
// (os.Create, a shell's >) starts the file's writeback every time, which
// made a 1 GiB write 4.6 times slower than plain loopback. At most
// writeFdsMax stay open; a node's is closed when it is forgotten, evicted,
// or its path no longer leads to its file (replaced behind the mount).
type writeFds struct {
	mu     sync.Mutex
	lru    list.List          // of *writeFd, most recently used first
	byNode map[*node]*writeFd // the kept descriptor of each node that has one
}

// writeFdsMax bounds the descriptors kept open for writes.
const writeFdsMax = 64

// writeFd is one kept descriptor, used by refs requests now.
type writeFd struct {
	n       *node
	fd      int
	refs    int
	evicted bool
	elem    *list.Element
}

// acquire returns a write descriptor of n's backing file and the func that
// ends its use. It checks that n's path still leads to the file the kept
// descriptor holds; where it does not, or none is kept, it opens one.
func (c *writeFds) acquire(n *node) (int, func(), syscall.Errno) {
	c.mu.Lock()
	w := c.byNode[n]
	if w != nil {
		w.refs++
		c.lru.MoveToFront(w.elem)
	}
	c.mu.Unlock()
	if w != nil {
		if n.stillAt() {
			return w.fd, func() { c.release(w) }, 0
		}
		c.release(w)
		c.forget(n) // replaced behind the mount: reach the new file by path
	}
	fd, same, errno := n.openByPath(unix.O_WRONLY)
	if errno != 0 {
		return -1, nil, errno
	}
	if !same {
		// Not the node's file: the caller's own fallback decides (backing).
		unix.Close(fd)
		return -1, nil, syscall.ESTALE
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.byNode[n]; w != nil && !w.evicted {
		// Another request kept one meanwhile: use it.
		unix.Close(fd)
		w.refs++
		return w.fd, func() { c.release(w) }, 0
	}
	w = &writeFd{n: n, fd: fd, refs: 1}
	w.elem = c.lru.PushFront(w)
	if c.byNode == nil {
		c.byNode = make(map[*node]*writeFd)
	}
	c.byNode[n] = w
	for c.lru.Len() > writeFdsMax {
		c.evict(c.lru.Back().Value.(*writeFd))
	}
	return fd, func() { c.release(w) }, 0
}

// release ends one use of w, closing it if it was evicted meanwhile.
func (c *writeFds) release(w *writeFd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.refs--
	if w.evicted && w.refs == 0 {
		unix.Close(w.fd)
	}
}

// forget drops n's kept descriptor, if any (the kernel forgot n).
func (c *writeFds) forget(n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.byNode[n]; w != nil {
		c.evict(w)
	}
}

// evict takes w out of the cache; it is closed once no request uses it.
// c.mu is held.
func (c *writeFds) evict(w *writeFd) {
	if w.evicted {
		return
	}
	w.evicted = true
	c.lru.Remove(w.elem)
	if c.byNode[w.n] == w {
		delete(c.byNode, w.n)
	}
	if w.refs == 0 {
		unix.Close(w.fd)
	}
}

// closeAll closes every kept descriptor (the mount is going away).
func (c *writeFds) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.evict(c.lru.Back().Value.(*writeFd))
	}
}

// stillAt reports whether n's path still leads to n's file, which a kept
// descriptor holds (acquire keeps only one that reached it): one stat of
// the path, on every WRITE through a kept descriptor.
func (n *node) stillAt() bool {
	rel, ok := n.rel()
	if !ok || rel == "" {
		return false
	}
	var st unix.Stat_t
	if unix.Fstatat(n.fsys.rootFd, rel, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return n.fsys.inoOf(&st) == n.StableAttr().Ino
}
