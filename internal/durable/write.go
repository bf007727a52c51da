// Package durable holds ckfs's durability helpers, the one copy every
// package uses: WriteFile replaces a small file atomically and durably (a
// reader sees the old content or the new, never a mix, and the new content
// survives a crash once it returns), and Datasync flushes an appended
// file's data, and SyncDir a directory's names. It imports nothing of ckfs, so every package may use it.
package durable

import (
	"os"
	"path/filepath"
)

// WriteFile replaces path with data: temp file beside it, write, fsync,
// rename, fsync the directory.
func WriteFile(path string, data []byte, mode os.FileMode) error {
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
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, so that the names created, renamed or
// removed in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
