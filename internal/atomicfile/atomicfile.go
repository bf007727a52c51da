// Package atomicfile replaces small files durably: a reader sees the old
// content or the new, never a mix, and the new content survives a crash
// once Write returns.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data: temp file beside it, write, fsync,
// rename, fsync the directory.
func Write(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
