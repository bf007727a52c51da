package fusefs

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The node journal lets a successor daemon take over a live mount (see
// Takeover). The kernel names files by node ids it was handed in replies
// (LOOKUP, READDIRPLUS, MKDIR, MKNOD, SYMLINK, LINK, CREATE) and keeps
// them until it forgets them; a daemon that dies takes its table of them
// with it. Node ids here are the backing files' inode numbers (go-fuse's
// ExternalNodeID), so a successor that looks the same path up again gets
// the same id; what it needs is which paths the kernel holds, and how
// many times it was handed each. The journal says that: one record each
// time a node id is handed out (written before the reply leaves), moved
// (a rename), made unreachable by its path (unlink, rmdir, renamed over),
// or forgotten by the kernel. It lives beside the store, is written
// without fsync (a daemon's death does not lose the page cache; a
// machine's ends the mount anyway), and is compacted at every takeover.
//
// A record: op (1 byte), node id (8), parent id (8), mode (4), count (4),
// name length (2), name; integers little-endian. Ops:
//
//	'L' handed out once more: count += 1; parent, name and mode set
//	'S' set (a compaction): count = the record's; parent, name, mode set
//	'M' moved: parent and name set
//	'U' unreachable by its path (unlinked, removed, renamed over)
//	'F' forgotten: count = 0
//
// Counting more than the kernel holds is harmless (a node kept a little
// longer); counting less would make go-fuse refuse the kernel's FORGET, so
// every record is written before the operation it reports is answered.
//
// A READDIRPLUS hands out a node for every entry it lists: those records
// are gathered while the listing is made and written at once, before its
// reply (one write a listing instead of one an entry: a walk of a large
// tree spent an eighth of the daemon's time in those writes, and on many
// cores the writes of concurrent listings queue on the journal's inode).
// Every other record but a LOOKUP's is written after what the listings in
// flight have gathered, so that a node renamed or unlinked after a
// listing looked it up is replayed in its new state, as when each record
// was written at once.
type nodeJournal struct {
	f io.Writer // the journal file (a counting writer in tests)
	// listings are the records of the READDIRPLUS requests in flight, by
	// the request's cancel channel (unique while it is in flight; the
	// lookups of its entries see it in their context); inFlight counts
	// them, so that no other record takes mu while there are none.
	mu       sync.Mutex
	listings map[<-chan struct{}]*[]byte
	inFlight atomic.Int32
}

// OpenNodeJournal opens the node journal at path for appending; fresh
// starts it empty (a new mount: the kernel holds nothing yet).
func OpenNodeJournal(path string, fresh bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if fresh {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("node journal: %w", err)
	}
	return f, nil
}

func (j *nodeJournal) add(op byte, id, parent uint64, mode uint32, count uint32, name string) {
	if j == nil || j.f == nil {
		return
	}
	// On the request path: a buffer on the stack for any name a
	// directory entry can have (255 bytes), one write.
	var buf [27 + 256]byte
	rec := appendRecord(buf[:0], op, id, parent, mode, count, name)
	if op != 'L' && j.inFlight.Load() > 0 {
		j.mu.Lock()
		defer j.mu.Unlock()
		for _, b := range j.listings {
			j.writeGathered(b)
		}
	}
	j.f.Write(rec)
}

// appendRecord appends one record to b.
func appendRecord(b []byte, op byte, id, parent uint64, mode uint32, count uint32, name string) []byte {
	b = append(b, op)
	b = binary.LittleEndian.AppendUint64(b, id)
	b = binary.LittleEndian.AppendUint64(b, parent)
	b = binary.LittleEndian.AppendUint32(b, mode)
	b = binary.LittleEndian.AppendUint32(b, count)
	b = binary.LittleEndian.AppendUint16(b, uint16(min(len(name), 0xffff)))
	return append(b, name...)
}

// writeGathered writes and empties what a listing gathered; j.mu is held.
func (j *nodeJournal) writeGathered(b *[]byte) {
	if len(*b) > 0 {
		j.f.Write(*b)
		*b = (*b)[:0]
	}
}

// listingBufs are the buffers listings gather their records in.
var listingBufs = sync.Pool{New: func() any { return new([]byte) }}

// beginListing starts gathering the records of the READDIRPLUS whose
// cancel channel is given; endListing writes them.
func (j *nodeJournal) beginListing(cancel <-chan struct{}) {
	if j == nil || j.f == nil || cancel == nil {
		return
	}
	b := listingBufs.Get().(*[]byte)
	*b = (*b)[:0]
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.listings == nil {
		j.listings = make(map[<-chan struct{}]*[]byte)
	}
	j.listings[cancel] = b
	j.inFlight.Add(1)
}

// endListing writes what the listing gathered, before its reply leaves.
func (j *nodeJournal) endListing(cancel <-chan struct{}) {
	if j == nil || j.f == nil || cancel == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	b, ok := j.listings[cancel]
	if !ok {
		return
	}
	j.writeGathered(b)
	delete(j.listings, cancel)
	j.inFlight.Add(-1)
	if cap(*b) <= 1<<20 {
		listingBufs.Put(b)
	}
}

// addHanded records a node handed out while serving the request whose
// context is ctx: gathered with its listing's other records if the
// request is a READDIRPLUS, written at once otherwise.
func (j *nodeJournal) addHanded(ctx context.Context, id, parent uint64, mode uint32, name string) {
	if j == nil || j.f == nil {
		return
	}
	if fc, ok := ctx.(*fuse.Context); ok && fc.Cancel != nil && j.inFlight.Load() > 0 {
		j.mu.Lock()
		b := j.listings[fc.Cancel]
		if b != nil {
			*b = appendRecord(*b, 'L', id, parent, mode, 1, name)
		}
		j.mu.Unlock()
		if b != nil {
			return
		}
	}
	j.add('L', id, parent, mode, 1, name)
}

// nodeID is the id the kernel knows in for.
func (f *FS) nodeID(in *fs.Inode) uint64 {
	if in == f.root.EmbeddedInode() {
		return fuse.FUSE_ROOT_ID
	}
	return in.StableAttr().Ino
}

// handed records that child, named name in n, was handed to the kernel
// by the request whose context is ctx.
func (n *node) handed(ctx context.Context, name string, child *fs.Inode) {
	if child != nil && !n.fsys.restoring {
		n.fsys.journal.addHanded(ctx, n.fsys.nodeID(child), n.fsys.nodeID(n.EmbeddedInode()), child.StableAttr().Mode, name)
	}
}

// journaled says whether node ids are recorded (the callers that must
// look a child up first ask it, so a mount without a journal pays
// nothing).
func (f *FS) journaled() bool { return f.journal != nil }

// moved records that child is now name in dir.
func (f *FS) moved(child *fs.Inode, dir *node, name string) {
	if child != nil {
		f.journal.add('M', f.nodeID(child), f.nodeID(dir.EmbeddedInode()), child.StableAttr().Mode, 0, name)
	}
}

// unreachable records that no path leads to child any more.
func (f *FS) unreachable(child *fs.Inode) {
	if child != nil {
		f.journal.add('U', f.nodeID(child), 0, 0, 0, "")
	}
}

// staleName is the private name (a NUL starts it: no kernel request
// carries one) under which Restore has the root hand out a node that can
// no longer be reached: its id and mode.
const stalePrefix = "\x00stale/"

func staleName(id uint64, mode uint32) string {
	return stalePrefix + strconv.FormatUint(id, 10) + "/" + strconv.FormatUint(uint64(mode), 10)
}

// lookupStale answers Restore's lookup of a staleName, and only while a
// restore runs.
func (n *node) lookupStale(ctx context.Context, name string) (*fs.Inode, bool) {
	if !n.fsys.restoring || n.EmbeddedInode() != n.fsys.root.EmbeddedInode() || !strings.HasPrefix(name, stalePrefix) {
		return nil, false
	}
	idS, modeS, _ := strings.Cut(strings.TrimPrefix(name, stalePrefix), "/")
	id, err1 := strconv.ParseUint(idS, 10, 64)
	mode, err2 := strconv.ParseUint(modeS, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	return n.NewInode(ctx, &staleNode{}, fs.StableAttr{Ino: id, Mode: uint32(mode)}), true
}

// staleNode is a node the kernel holds that a successor daemon could not
// find again (unlinked while open, changed behind the mount): every
// request for it fails with ESTALE, for that node only.
type staleNode struct{ fs.Inode }

func (*staleNode) Getattr(context.Context, fs.FileHandle, *fuse.AttrOut) syscall.Errno {
	return syscall.ESTALE
}
func (*staleNode) Setattr(context.Context, fs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return syscall.ESTALE
}
func (*staleNode) Lookup(context.Context, string, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.ESTALE
}
func (*staleNode) Open(context.Context, uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, 0, syscall.ESTALE
}
func (*staleNode) Opendir(context.Context) syscall.Errno { return syscall.ESTALE }
func (*staleNode) OpendirHandle(context.Context, uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, 0, syscall.ESTALE
}
func (*staleNode) Readdir(context.Context) (fs.DirStream, syscall.Errno) {
	return nil, syscall.ESTALE
}
func (*staleNode) Read(context.Context, fs.FileHandle, []byte, int64) (fuse.ReadResult, syscall.Errno) {
	return nil, syscall.ESTALE
}
func (*staleNode) Write(context.Context, fs.FileHandle, []byte, int64) (uint32, syscall.Errno) {
	return 0, syscall.ESTALE
}
func (*staleNode) Fsync(context.Context, fs.FileHandle, uint32) syscall.Errno { return syscall.ESTALE }
func (*staleNode) Readlink(context.Context) ([]byte, syscall.Errno) {
	return nil, syscall.ESTALE
}
func (*staleNode) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.ESTALE
}
func (*staleNode) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.ESTALE
}
func (*staleNode) Unlink(context.Context, string) syscall.Errno { return syscall.ESTALE }
func (*staleNode) Rmdir(context.Context, string) syscall.Errno  { return syscall.ESTALE }

// RestoreStats says what a takeover found of the nodes the kernel held.
type RestoreStats struct {
	Nodes int // node ids found again by their paths
	Stale int // node ids answered with ESTALE from now on
}

// jnode is a node as the journal leaves it.
type jnode struct {
	parent uint64
	name   string
	mode   uint32
	count  uint64
	gone   bool
	depth  int // -1 while computed, 0 unknown
}

// readNodeJournal replays a journal into the nodes it says the kernel
// holds. A torn last record (a daemon killed in the middle of a write) is
// ignored: the operation it reported was not answered.
func readNodeJournal(b []byte) map[uint64]*jnode {
	nodes := map[uint64]*jnode{}
	for len(b) >= 27 {
		op, id, parent := b[0], binary.LittleEndian.Uint64(b[1:]), binary.LittleEndian.Uint64(b[9:])
		mode, count, n := binary.LittleEndian.Uint32(b[17:]), binary.LittleEndian.Uint32(b[21:]), int(binary.LittleEndian.Uint16(b[25:]))
		if len(b) < 27+n {
			break
		}
		name := string(b[27 : 27+n])
		b = b[27+n:]
		j := nodes[id]
		if j == nil {
			j = &jnode{}
			nodes[id] = j
		}
		switch op {
		case 'L', 'S':
			if op == 'L' {
				j.count++
			} else {
				j.count = uint64(count)
			}
			j.parent, j.name, j.mode, j.gone = parent, name, mode, false
		case 'M':
			j.parent, j.name, j.gone = parent, name, false
		case 'U':
			j.gone = true
		case 'F':
			j.count = 0
		}
	}
	return nodes
}

// depth is how many parents lead from id to the root (0: none do).
func depth(nodes map[uint64]*jnode, id uint64) int {
	if id == fuse.FUSE_ROOT_ID {
		return 1
	}
	j := nodes[id]
	if j == nil || j.gone || j.depth == -1 {
		return 0 // unknown, unreachable, or a cycle
	}
	if j.depth != 0 {
		return j.depth
	}
	j.depth = -1
	d := depth(nodes, j.parent)
	if d > 0 {
		d++
	}
	j.depth = d
	return d
}

// Restore registers, through raw (the file system a takeover serves,
// before it serves), every node the journal says the kernel holds, as
// many times as it was handed out: found again by its path when the
// backing file there has the same id, else as a stale node. Then it
// compacts the journal into j.
func (f *FS) restore(raw fuse.RawFileSystem, journal []byte) RestoreStats {
	nodes := readNodeJournal(journal)
	ids := make([]uint64, 0, len(nodes))
	for id, j := range nodes {
		if j.count > 0 {
			depth(nodes, id)
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(a, b int) bool { return nodes[ids[a]].depth < nodes[ids[b]].depth })
	f.restoring = true
	defer func() { f.restoring = false }()
	var st RestoreStats
	found := map[uint64]bool{fuse.FUSE_ROOT_ID: true}
	for _, id := range ids {
		j := nodes[id]
		name, parent := j.name, j.parent
		if j.depth == 0 || !found[parent] || !f.lookupAs(raw, parent, name, id) {
			name, parent = staleName(id, j.mode), fuse.FUSE_ROOT_ID
			if !f.lookupAs(raw, parent, name, id) {
				continue // the kernel's FORGET of it will find no node
			}
			st.Stale++
			f.journal.add('S', id, parent, j.mode, uint32(j.count), name)
			f.journal.add('U', id, 0, 0, 0, "")
		} else {
			st.Nodes++
			found[id] = true
			f.journal.add('S', id, parent, j.mode, uint32(j.count), name)
		}
		for range j.count - 1 {
			f.lookupAs(raw, parent, name, id)
		}
	}
	return st
}

// lookupAs looks name up in parent through raw, and reports whether it
// came back as node id.
func (f *FS) lookupAs(raw fuse.RawFileSystem, parent uint64, name string, id uint64) bool {
	var out fuse.EntryOut
	return raw.Lookup(nil, &fuse.InHeader{NodeId: parent}, name, &out) == fuse.OK && out.NodeId == id
}
