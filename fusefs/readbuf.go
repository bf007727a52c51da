package fusefs

import (
	"errors"
	"os"
	"reflect"
	"sync"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// residentReadBuffers makes every buffer srv reads requests into resident
// in memory before its first read.
//
// Why: the kernel copies a request into the daemon's buffer inside
// read(2), and when that copy faults while the daemon has a fatal signal
// pending (kill -9, the OOM killer, a Go panic taking its threads down) the
// copy fails and the kernel ends the request with EIO for the process
// that made it (fuse_dev_do_read); no successor can resend it. A buffer
// whose pages are present and writable needs no fault: the kernel copies
// without looking at signals, the request reaches the processing queue, and
// a successor's FUSE_NOTIFY_RESEND gives it back. go-fuse allocates its
// read buffers fresh (memory Go got from the kernel is not written until
// used), so each is touched here, page by page, when it is made; a buffer
// in use is never given back to the kernel by Go's scavenger.
//
// go-fuse has no option for this: its buffer pool (Server.readPool, in
// the version go.mod pins) is reached by reflection, before Serve starts.
// If a later go-fuse moves it, this returns an error and the mount serves
// as before (TestResidentReadBuffers fails first).
func residentReadBuffers(srv *fuse.Server) error {
	v := reflect.ValueOf(srv).Elem().FieldByName("readPool")
	if !v.IsValid() || v.Type() != reflect.TypeFor[sync.Pool]() {
		return errors.New("go-fuse's server has no read buffer pool to prepare")
	}
	pool := (*sync.Pool)(unsafe.Pointer(v.UnsafeAddr()))
	next := pool.New
	if next == nil {
		return errors.New("go-fuse's read buffer pool has no allocator")
	}
	page := os.Getpagesize()
	pool.New = func() any {
		b, ok := next().([]byte)
		if !ok {
			return b
		}
		for i := 0; i < len(b); i += page {
			b[i] = 0
		}
		if len(b) > 0 {
			b[len(b)-1] = 0
		}
		return b
	}
	return nil
}
