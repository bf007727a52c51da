//go:build !linux

package beneath

import "golang.org/x/sys/unix"

// DirFlags open a directory to resolve names from (no O_PATH here).
const DirFlags = unix.O_RDONLY | unix.O_DIRECTORY

func open(root int, rel string, flags int) (int, error) { return walk(root, rel, flags) }
