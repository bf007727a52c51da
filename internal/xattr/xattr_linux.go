// Package xattr reads and writes the extended attributes ckfs records
// (index.XAttrCaptured), through open descriptors only: capture reads them
// from the backing directory, a rewind writes them back.
package xattr

import (
	"bytes"
	"os"

	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// Read returns the recorded extended attributes of an open file or
// directory (index.XAttrCaptured). One flistxattr answers the common case,
// a file with none.
func Read(fd int) (map[string][]byte, error) {
	names, err := listXAttrs(fd)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var out map[string][]byte
	for _, n := range names {
		if !index.XAttrCaptured(n) {
			continue
		}
		v, err := getXAttr(fd, n)
		if err == unix.ENODATA {
			continue // removed since the list
		}
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string][]byte{}
		}
		out[n] = v
	}
	return out, nil
}

func listXAttrs(fd int) ([]string, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Flistxattr(fd, buf)
		if err == unix.ERANGE {
			continue
		}
		if err == unix.ENOTSUP {
			return nil, nil // the filesystem has none
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, b := range bytes.Split(buf[:n], []byte{0}) {
			if len(b) > 0 {
				names = append(names, string(b))
			}
		}
		return names, nil
	}
}

func getXAttr(fd int, name string) ([]byte, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Fgetxattr(fd, name, buf)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

// Apply makes the recorded attributes of the open file or directory f
// exactly want: it sets every attribute of want and removes every recorded
// one that want lacks. Attributes outside the recorded namespaces are
// left alone.
func Apply(f *os.File, want map[string][]byte) error {
	fd := int(f.Fd())
	have, err := Read(fd)
	if err != nil {
		return err
	}
	for _, n := range index.XAttrNames(have) {
		if _, keep := want[n]; !keep {
			if err := unix.Fremovexattr(fd, n); err != nil && err != unix.ENODATA {
				return &os.PathError{Op: "removexattr " + n, Path: f.Name(), Err: err}
			}
		}
	}
	for _, n := range index.XAttrNames(want) {
		if v, ok := have[n]; ok && bytes.Equal(v, want[n]) {
			continue
		}
		if err := unix.Fsetxattr(fd, n, want[n], 0); err != nil {
			return &os.PathError{Op: "setxattr " + n, Path: f.Name(), Err: err}
		}
	}
	return nil
}
