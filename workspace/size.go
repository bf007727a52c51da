package workspace

import (
	"io/fs"
	"path/filepath"
)

// DirBytes sums the sizes of the files under dir.
func DirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if i, err := e.Info(); err == nil {
				n += i.Size()
			}
		}
		return nil
	})
	return n
}

// ObjectBytes sums the size of every object file of a store (one stat
// each, no reads).
func ObjectBytes(store string) int64 { return DirBytes(filepath.Join(store, "objects")) }
