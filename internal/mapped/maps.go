//go:build linux

package mapped

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mapping is one line of /proc/PID/maps:
//
//	7f1c2a000000-7f1c2a001000 rw-s 00000000 00:2b 1234    /repo/data.bin
type mapping struct {
	sharedWritable bool
	dev, ino       uint64
	path           string
}

// parseLine reads one line of /proc/PID/maps; ok is false for a line that
// is not a file mapping (anonymous memory, [heap], [stack]) or malformed.
// The path is the rest of the line after the inode, spaces included; a
// deleted file's " (deleted)" mark makes it no file mapping.
func parseLine(line string) (m mapping, ok bool) {
	line = strings.TrimRight(line, "\n")
	rest := line
	var f [5]string
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			return m, false
		}
		f[i], rest = rest[:j], rest[j:]
	}
	path := strings.TrimLeft(rest, " ")
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, " (deleted)") {
		return m, false
	}
	perms := f[1]
	majS, minS, found := strings.Cut(f[3], ":")
	major, err1 := strconv.ParseUint(majS, 16, 32)
	minor, err2 := strconv.ParseUint(minS, 16, 32)
	ino, err3 := strconv.ParseUint(f[4], 10, 64)
	if len(perms) != 4 || !found || err1 != nil || err2 != nil || err3 != nil || ino == 0 {
		return m, false
	}
	return mapping{
		sharedWritable: perms[1] == 'w' && perms[3] == 's',
		dev:            unix.Mkdev(uint32(major), uint32(minor)),
		ino:            ino,
		path:           path,
	}, true
}
