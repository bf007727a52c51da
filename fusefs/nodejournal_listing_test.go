package fusefs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// countingWriter counts the writes made through it.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.w.Write(b)
}

// A listing's entries are journaled together: the READDIRPLUS that hands
// the kernel 300 nodes writes their records in one write (or a few, where
// the kernel reads the directory in more than one request), not one an
// entry; and the journal still says every node was handed out once.
func TestListingIsJournaledInOneWrite(t *testing.T) {
	testenv.RequireFUSE(t)
	dir := t.TempDir()
	const files = 300
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	f, err := New(fd, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(t.TempDir(), "nodes.journal")
	jf, err := OpenNodeJournal(jpath, true)
	if err != nil {
		t.Fatal(err)
	}
	defer jf.Close()
	cw := &countingWriter{w: jf}
	f.journal = &nodeJournal{f: cw}
	srv, err := f.Mount(dir, Options{InPlace: true, Cached: true})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if uerr := srv.Unmount(); uerr != nil {
		t.Fatal(uerr)
	}
	if err != nil || len(entries) != files {
		t.Fatalf("listed %d entries (%v), want %d", len(entries), err, files)
	}
	b, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	nodes := readNodeJournal(b)
	handed := 0
	for _, n := range nodes {
		if n.count == 1 {
			handed++
		}
	}
	if handed != files {
		t.Errorf("the journal holds %d nodes handed out once, want %d", handed, files)
	}
	if w := cw.n.Load(); w > 10 {
		t.Errorf("%d writes to the journal for one listing of %d entries", w, files)
	}
}

// A node renamed or unlinked after a listing looked it up, before the
// listing's reply, is replayed in its new state: the listing's gathered
// records are written before the rename's or the unlink's, as they were
// when every record was written at once.
func TestListingRecordsPrecedeLaterChanges(t *testing.T) {
	b := journalOf(t, func(j *nodeJournal) {
		cancel := make(chan struct{})
		ctx := &fuse.Context{Cancel: cancel}
		j.beginListing(cancel)
		j.addHanded(ctx, 5, fuse.FUSE_ROOT_ID, syscall.S_IFREG|0o644, "old")
		j.add('M', 5, fuse.FUSE_ROOT_ID, syscall.S_IFREG|0o644, 0, "new")
		j.addHanded(ctx, 6, fuse.FUSE_ROOT_ID, syscall.S_IFREG|0o644, "doomed")
		j.add('U', 6, 0, 0, 0, "")
		j.addHanded(ctx, 7, fuse.FUSE_ROOT_ID, syscall.S_IFREG|0o644, "kept")
		j.endListing(cancel)
	})
	nodes := readNodeJournal(b)
	if n := nodes[5]; n == nil || n.name != "new" || n.count != 1 || n.gone {
		t.Errorf("node renamed after the listing looked it up: %+v, want named new, handed out once", n)
	}
	if n := nodes[6]; n == nil || !n.gone || n.count != 1 {
		t.Errorf("node unlinked after the listing looked it up: %+v, want gone, handed out once", n)
	}
	if n := nodes[7]; n == nil || n.name != "kept" || n.count != 1 {
		t.Errorf("node listed: %+v, want named kept, handed out once", n)
	}
}
