package workspace

import (
	"io/fs"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/session"
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

// ObjectBytes sums the size of every object file and pack of a store (one
// stat each, no reads).
func ObjectBytes(store string) int64 {
	return DirBytes(Layout(store).Objects()) + DirBytes(Layout(store).Packs())
}

// WindowSessions maps the windows the agent hooks opened (named by tool
// call ids) to their sessions, from ckfs's session logs.
func (w *Workspace) WindowSessions() map[string]string {
	store := w.Store
	out := map[string]string{}
	ids, _ := session.List(store)
	for _, id := range ids {
		evs, _, _ := session.Load(session.Path(store, id))
		for _, e := range evs {
			if e.Kind == session.KindToolCall {
				if _, seen := out[e.Call]; !seen {
					out[e.Call] = id
				}
			}
		}
	}
	return out
}

// Usage is the store's size on disk and its object count.
func (w *Workspace) Usage() (bytes int64, objects int) {
	store := w.Store
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			bytes += info.Size()
		}
		if filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))) == "objects" {
			objects++
		}
		return nil
	})
	return bytes, objects + cas.PackedObjects(store)
}
