package fusefs

import (
	"fmt"
	"unsafe"

	"github.com/ckfs-dev/ckfs/internal/nohandle"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Taking over a live mount. The kernel keeps a FUSE connection as long as
// any process holds its /dev/fuse descriptor, so when a daemon dies with
// a supervisor holding a duplicate, a successor can serve the same
// connection: the processes using the mount (their working directories,
// their open files) never see it go. What the successor needs:
//
//   - the connection's settings: the kernel sent INIT once, to the first
//     daemon, and will not again. go-fuse reads INIT as a server's first
//     request, so the successor's server is started on one end of a
//     socket pair that holds a copy of that INIT (InitBytes kept it); once
//     it has answered, the /dev/fuse descriptor is put in place of that
//     end (dup3), and the server serves the real connection from then on.
//   - the node ids the kernel holds: Restore, from the node journal.
//   - the requests the dead daemon read and never answered:
//     FUSE_NOTIFY_RESEND (Linux 6.9) makes the kernel queue them again.

// InitBytes is the INIT request srv's kernel sent (header and body), as
// Takeover needs it.
func InitBytes(srv *fuse.Server) []byte {
	in := srv.KernelSettings()
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(in)), unsafe.Sizeof(*in))...)
}

// Takeover serves f on the live connection whose /dev/fuse descriptor is
// fuseFd (f takes it), mounted with o by an earlier daemon that is gone;
// init is that daemon's InitBytes and journal its node journal's content.
// It returns once the server serves, with the nodes found again.
func (f *FS) Takeover(fuseFd int, init []byte, journal []byte, o Options) (*fuse.Server, RestoreStats, error) {
	var in fuse.InitIn
	if len(init) != int(unsafe.Sizeof(in)) {
		return nil, RestoreStats{}, fmt.Errorf("take over: the kernel's settings are %d bytes, want %d", len(init), unsafe.Sizeof(in))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&in)), len(init)), init)
	in.Length, in.Opcode, in.Unique, in.NodeId = uint32(len(init)), 26, 1, 0 // FUSE_INIT
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, RestoreStats{}, fmt.Errorf("take over: %w", err)
	}
	defer unix.Close(sp[1])
	if _, err := unix.Write(sp[1], unsafe.Slice((*byte)(unsafe.Pointer(&in)), len(init))); err != nil {
		unix.Close(sp[0])
		return nil, RestoreStats{}, fmt.Errorf("take over: %w", err)
	}
	opts, raw := f.server(o)
	srv, err := fuse.NewServer(raw, fmt.Sprintf("/dev/fd/%d", sp[0]), &opts.MountOptions)
	if err != nil {
		unix.Close(sp[0])
		return nil, RestoreStats{}, fmt.Errorf("take over: %w", err)
	}
	residentReadBuffers(srv) // an error leaves go-fuse's own buffers: TestResidentReadBuffers guards it
	st := f.restore(raw, journal)
	// The server's descriptor becomes the connection's; nothing reads it
	// before Serve.
	if err := unix.Dup3(fuseFd, sp[0], unix.O_CLOEXEC); err != nil {
		return nil, st, fmt.Errorf("take over: %w", err)
	}
	unix.Close(fuseFd)
	go srv.Serve()
	// Requests the dead daemon read and never answered come again.
	resend := fuse.OutHeader{Length: uint32(unsafe.Sizeof(fuse.OutHeader{})), Status: 7} // FUSE_NOTIFY_RESEND
	if _, err := unix.Write(sp[0], unsafe.Slice((*byte)(unsafe.Pointer(&resend)), unsafe.Sizeof(resend))); err != nil {
		return srv, st, fmt.Errorf("take over: ask the kernel to resend what the dead daemon left unanswered: %w", err)
	}
	f.setModel(o, srv)
	return srv, st, nil
}

// FuseFd finds the process's /dev/fuse descriptor: the one a mount made
// (one mount a process), for a supervisor to keep.
func FuseFd() (int, error) {
	for fd := 3; fd < 1024; fd++ {
		if p, err := readlinkFd(fd); err == nil && p == "/dev/fuse" {
			return fd, nil
		}
	}
	return -1, fmt.Errorf("no /dev/fuse descriptor in this process")
}

func readlinkFd(fd int) (string, error) {
	buf := make([]byte, 64)
	n, err := unix.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd), buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// TakeoverBlocker says why a successor could not take srv's connection
// over ("" when it can): the kernel must hold no file or directory
// handle a successor would not know, and must be able to resend what a
// dead daemon left unanswered.
func (f *FS) TakeoverBlocker(srv *fuse.Server) string {
	flags := srv.KernelSettings().Flags64()
	switch {
	case f.journal == nil:
		return "no node journal is kept"
	case !f.noOpen:
		return "files are opened through the daemon (capture.io = passthrough, or a separate mountpoint), so the kernel holds handles only this daemon knows"
	case flags&fuse.CAP_NO_OPEN_SUPPORT == 0 || flags&nohandle.Cap == 0:
		return "this kernel cannot open files and directories without a request"
	case flags&fuse.CAP_HAS_RESEND == 0:
		return "this kernel cannot resend what a dead daemon left unanswered (FUSE_NOTIFY_RESEND, Linux 6.9)"
	}
	return ""
}
