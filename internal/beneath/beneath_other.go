//go:build !linux

package beneath

import "golang.org/x/sys/unix"

// DirFlags open a directory to resolve names from (no O_PATH here).
const DirFlags = unix.O_RDONLY | unix.O_DIRECTORY

func open(root int, rel string, flags int) (int, error) { return walk(root, rel, flags) }

// lstatDeep is Lstat of a path below root's own names: an fstatat from
// its directory (there is no O_PATH here).
func lstatDeep(root int, rel string, st *unix.Stat_t) error {
	pfd, base, err := Parent(root, rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	return unix.Fstatat(pfd, base, st, unix.AT_SYMLINK_NOFOLLOW)
}
