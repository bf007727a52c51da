package index

import (
	"fmt"
	"strings"
)

// File types and owners as POSIX has them, in their record forms.

// TypeOfMode returns the file type of a POSIX st_mode (its S_IFMT bits),
// and false for a format this package does not know.
func TypeOfMode(mode uint32) (FileType, bool) {
	switch mode & 0o170000 {
	case 0o100000:
		return TypeFile, true
	case 0o040000:
		return TypeDir, true
	case 0o120000:
		return TypeSymlink, true
	case 0o010000:
		return TypeFIFO, true
	case 0o140000:
		return TypeSocket, true
	case 0o020000:
		return TypeChar, true
	case 0o060000:
		return TypeBlock, true
	}
	return "", false
}

// ModeOfType returns the S_IFMT bits of a special file type (for mknod).
func ModeOfType(t FileType) uint32 {
	switch t {
	case TypeFIFO:
		return 0o010000
	case TypeSocket:
		return 0o140000
	case TypeChar:
		return 0o020000
	case TypeBlock:
		return 0o060000
	}
	return 0
}

// validOwner reports whether s is "uid:gid" in decimal, without leading
// zeros.
func validOwner(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && validUint(s[:i]) && validUint(s[i+1:])
}

func validUint(s string) bool {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// OwnerOf returns the record form of an owner.
func OwnerOf(uid, gid uint32) string { return fmt.Sprintf("%d:%d", uid, gid) }

// ParseOwner returns the uid and gid of an owner in record form.
func ParseOwner(s string) (uid, gid uint32, ok bool) {
	if !validOwner(s) {
		return 0, 0, false
	}
	var u, g uint64
	fmt.Sscanf(s, "%d:%d", &u, &g)
	if u > 1<<32-1 || g > 1<<32-1 {
		return 0, 0, false
	}
	return uint32(u), uint32(g), true
}
