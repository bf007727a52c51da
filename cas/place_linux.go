package cas

import "golang.org/x/sys/unix"

// renameNoReplace renames oldpath to newpath unless newpath exists
// (EEXIST then). File systems without the flag answer EINVAL.
func renameNoReplace(oldpath, newpath string) error {
	return unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
}
