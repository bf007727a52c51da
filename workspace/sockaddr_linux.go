package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSockPath is what fits in sockaddr_un's sun_path with its NUL.
const maxSockPath = 107

// SockAddr returns an address for the socket at path that fits in
// sun_path: path itself, or, for a long one, the same file reached through
// a descriptor of its directory (/proc/self/fd/N/NAME). done closes that
// descriptor once the bind or connect is made.
func SockAddr(path string) (addr string, done func(), err error) {
	if len(path) <= maxSockPath {
		return path, func() {}, nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	addr = fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path))
	if len(addr) > maxSockPath {
		d.Close()
		return "", nil, fmt.Errorf("socket %s: its name is too long for a Unix socket", path)
	}
	return addr, func() { d.Close() }, nil
}
