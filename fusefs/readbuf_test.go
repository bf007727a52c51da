package fusefs

import (
	"os"
	"reflect"
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Every buffer the server reads a request into is resident before its
// first read, also one made from memory Go just gave back to the kernel
// (debug.FreeOSMemory): a daemon killed while the kernel copies a request
// into it then fails no request with EIO (residentReadBuffers). It also
// fails when a go-fuse upgrade moves the buffer pool.
func TestResidentReadBuffers(t *testing.T) {
	testenv.RequireFUSE(t)
	srv, err := fuse.NewServer(fuse.NewDefaultRawFileSystem(), t.TempDir(), &fuse.MountOptions{Name: "ckfs-test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := residentReadBuffers(srv); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount() })
	pool := (*sync.Pool)(unsafe.Pointer(reflect.ValueOf(srv).Elem().FieldByName("readPool").UnsafeAddr()))
	for i := range 5 {
		debug.FreeOSMemory()
		b := pool.New().([]byte)
		if n, all := absentPages(t, b); n > 0 {
			t.Fatalf("buffer %d: %d of its %d pages are not resident before its first read", i, n, all)
		}
	}
}

// absentPages counts the pages of b that are not in memory (mincore(2)).
func absentPages(t *testing.T, b []byte) (absent, all int) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := start &^ (page - 1)
	end := (start + uintptr(len(b)) + page - 1) &^ (page - 1)
	vec := make([]byte, (end-first)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, first, end-first, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	for _, v := range vec {
		if v&1 == 0 {
			absent++
		}
	}
	return absent, len(vec)
}
