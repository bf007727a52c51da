package nohandle

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirCalls records what Dirs asks of the file system under it.
type dirCalls struct {
	fuse.RawFileSystem
	log []string
}

func (d *dirCalls) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	d.log = append(d.log, "open")
	out.Fh = 7
	return fuse.OK
}

func (d *dirCalls) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	d.log = append(d.log, fmt.Sprintf("readdirplus fh=%d", in.Fh))
	return fuse.OK
}

func (d *dirCalls) ReleaseDir(in *fuse.ReleaseIn) {
	d.log = append(d.log, fmt.Sprintf("release fh=%d", in.Fh))
}

func TestNoOpendirOnlyWhereTheKernelOffersIt(t *testing.T) {
	for _, offered := range []bool{true, false} {
		d := &dirCalls{RawFileSystem: fuse.NewDefaultRawFileSystem()}
		r := &Dirs{RawFileSystem: d, offered: func() bool { return offered }}
		st := r.OpenDir(nil, &fuse.OpenIn{}, &fuse.OpenOut{})
		if offered && st != fuse.ENOSYS {
			t.Errorf("offered: OPENDIR answered %v, want ENOSYS", st)
		}
		if !offered && (st != fuse.OK || !slices.Equal(d.log, []string{"open"})) {
			t.Errorf("not offered: OPENDIR answered %v after %q, want it served", st, d.log)
		}
	}
}

func TestNoOpendirServesHandlelessReadsThroughItsOwn(t *testing.T) {
	d := &dirCalls{RawFileSystem: fuse.NewDefaultRawFileSystem()}
	r := &Dirs{RawFileSystem: d, offered: func() bool { return true }}
	in := &fuse.ReadIn{}
	if st := r.ReadDirPlus(nil, in, nil); st != fuse.OK {
		t.Fatal(st)
	}
	if want := []string{"open", "readdirplus fh=7", "release fh=7"}; !slices.Equal(d.log, want) {
		t.Errorf("calls %q, want %q", d.log, want)
	}
	if in.Fh != 0 {
		t.Errorf("the request's handle is left at %d", in.Fh)
	}
	// A handle the kernel holds (opened before the first ENOSYS) is used
	// as it is.
	d.log = nil
	r.ReadDirPlus(nil, &fuse.ReadIn{Fh: 3}, nil)
	if want := []string{"readdirplus fh=3"}; !slices.Equal(d.log, want) {
		t.Errorf("with a handle: calls %q, want %q", d.log, want)
	}
}
