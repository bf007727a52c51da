package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/provenance"
)

// TreeAt is the whole tree of the workspace as it was at checkpoint seq
// (provenance.Tree's rule): the recorded paths from the store, the others
// as they are now where the timeline can vouch for them.
func (v *View) TreeAt(seq uint64) ([]provenance.TreeEntry, error) {
	live, err := v.LiveTree()
	if err != nil {
		return nil, err
	}
	return v.TreeFrom(seq, live), nil
}

// LiveTree lists the workspace as it is now (lstat only), for TreeFrom:
// a command that builds many checkpoints' trees lists it once.
func (v *View) LiveTree() ([]provenance.TreeEntry, error) { return liveTree(v.Meta.Root) }

// TreeFrom is TreeAt with the live tree listed already. A live file that
// changed since its listing is not served: TreeSource checks.
func (v *View) TreeFrom(seq uint64, live []provenance.TreeEntry) []provenance.TreeEntry {
	return provenance.Tree(v.Records, seq, v.timeOf(seq), slices.Clone(live))
}

// timeOf is the time of the record seq names (the last one before it
// where seq is a gap).
func (v *View) timeOf(seq uint64) time.Time {
	var t time.Time
	for i := range v.Records {
		if v.Records[i].Seq > seq {
			break
		}
		t = v.Records[i].Time
	}
	return t
}

// liveTree lists the tree under root as it is now (lstat only, nothing
// read), without git's own files.
func liveTree(root string) ([]provenance.TreeEntry, error) {
	var out []provenance.TreeEntry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read the workspace: %w", err)
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone since the listing
		}
		out = append(out, liveEntry(rel, info))
		return nil
	})
	return out, err
}

// liveEntry is what lstat says of a live path: its state without
// content, and its ctime.
func liveEntry(rel string, info os.FileInfo) provenance.TreeEntry {
	e := provenance.TreeEntry{Path: rel, State: index.State{Size: info.Size(), MTime: info.ModTime().UnixNano(), Type: index.TypeSocket}}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		e.State.Mode = uint32(st.Mode) & 0o7777
		if t, ok := index.TypeOfMode(uint32(st.Mode)); ok {
			e.State.Type = t // devices and sockets are listed; neither bisect nor a view makes them
		}
		e.CTime = ctimeNs(st)
	}
	return e
}

// TreeSource reads the content of a checkpoint's tree: a recorded path's
// from the store (verified), a live one's from the workspace, checked
// against the lstat the tree was built from so that a file changed since
// is an error, never served as the past. Safe for concurrent use.
type TreeSource struct {
	View *View
	mu   sync.Mutex
}

// Content returns the whole content of a file or symlink of the tree.
func (s *TreeSource) Content(e provenance.TreeEntry) ([]byte, error) {
	switch e.From {
	case provenance.FromStore:
		return s.View.Content(e.State)
	case provenance.FromLive:
	default:
		return nil, fmt.Errorf("%s: the timeline cannot vouch for it: %s", e.Path, e.Reason)
	}
	s.mu.Lock()
	err := s.View.openDisk()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	data, err := s.View.Dir.Content(e.Path)
	if err != nil {
		return nil, err
	}
	st, err := s.View.Dir.Stat(e.Path)
	if err != nil {
		return nil, err
	}
	if st.MTime != e.State.MTime || int64(len(data)) != e.State.Size && e.State.Type == index.TypeFile {
		return nil, fmt.Errorf("%s changed since the tree was read", e.Path)
	}
	return data, nil
}
