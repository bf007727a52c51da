package workspace

import (
	"os"
	"path/filepath"
)

// HiddenUnderMount reports whether the current directory is not the
// directory its path names now: a shell that was in a repository when
// ckfs mounted over it stays in the directory under the mount, where
// every write bypasses ckfs. It returns that path.
func HiddenUnderMount() (string, bool) {
	abs, err := filepath.Abs(".")
	if err != nil {
		return "", false
	}
	here, err := os.Stat(".")
	if err != nil {
		return "", false
	}
	there, err := os.Stat(abs)
	if err != nil {
		return "", false
	}
	return abs, !os.SameFile(here, there)
}

// RefuseHiddenCwd refuses to open a window of ws from a current directory
// hidden under its mount (HiddenUnderMount): what the window's commands
// write there would never reach the daemon, and the window would record
// nothing of it.
func (ws *Workspace) RefuseHiddenCwd() error {
	dir, hidden := ws.HiddenCwd()
	if !hidden {
		return nil
	}
	return Errorf(ErrRefused, "this shell is in the directory under the mount at %s (it was there before ckfs mount): writes from it bypass ckfs and nothing would be recorded; run cd %q first", dir, dir)
}

// HiddenCwd reports whether the current directory is in ws's repository
// as it is under the mount (HiddenUnderMount), and returns its path.
func (ws *Workspace) HiddenCwd() (string, bool) {
	dir, hidden := HiddenUnderMount()
	return dir, hidden && ws.Meta != nil && Within(dir, ws.Meta.Root)
}
