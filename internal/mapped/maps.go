//go:build linux

package mapped

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mapping is one file mapping, a line of /proc/PID/maps:
//
//	7f1c2a000000-7f1c2a001000 rw-s 00000000 00:2b 1234    /repo/data.bin
type Mapping struct {
	Start, End uint64 // the address range, End exclusive
	Perms      string // "rw-s": read, write, execute, shared or private
	Dev, Ino   uint64
	Path       string
}

// SharedWritable reports whether writes through the mapping reach the file.
func (m Mapping) SharedWritable() bool { return m.Perms[1] == 'w' && m.Perms[3] == 's' }

// ParseLine reads one line of /proc/PID/maps; ok is false for a line that
// is not a file mapping (anonymous memory, [heap], [stack]) or malformed.
// The path is the rest of the line after the inode, spaces included; a
// deleted file's " (deleted)" mark makes it no file mapping.
func ParseLine(line string) (m Mapping, ok bool) {
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
	startS, endS, okR := strings.Cut(f[0], "-")
	start, err0 := strconv.ParseUint(startS, 16, 64)
	end, err1 := strconv.ParseUint(endS, 16, 64)
	majS, minS, okD := strings.Cut(f[3], ":")
	major, err2 := strconv.ParseUint(majS, 16, 32)
	minor, err3 := strconv.ParseUint(minS, 16, 32)
	ino, err4 := strconv.ParseUint(f[4], 10, 64)
	if !okR || !okD || len(f[1]) != 4 || end <= start || ino == 0 ||
		err0 != nil || err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return m, false
	}
	return Mapping{
		Start: start, End: end, Perms: f[1],
		Dev:  unix.Mkdev(uint32(major), uint32(minor)),
		Ino:  ino,
		Path: path,
	}, true
}
