package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/provenance"
)

// Materialised is a checkpoint's tree written out to a scratch directory
// (for bisect): the workspace is only read.
type Materialised struct {
	Dir         string
	have        map[string]provenance.TreeEntry // what Dir holds, by path
	Unavailable []provenance.TreeEntry          // the last tree's paths the timeline could not vouch for (left out)
	Written     int                             // paths written or removed by the last Write
	src         *TreeSource
}

// NewMaterialised writes trees into dir, which must be empty or absent.
func NewMaterialised(dir string) (*Materialised, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		return nil, Errorf(ErrUsage, "%s is not empty: give an empty or new directory", dir)
	}
	return &Materialised{Dir: dir, have: map[string]provenance.TreeEntry{}}, nil
}

// Write makes Dir hold tree: only what differs from what it holds is
// written or removed, so stepping between nearby checkpoints costs what
// changed between them. Files a test run left in Dir stay (a build cache
// keeps working), unless the tree has something at their path.
func (m *Materialised) Write(v *View, tree []provenance.TreeEntry) error {
	m.Written, m.Unavailable = 0, nil
	if m.src == nil || m.src.View != v {
		m.src = &TreeSource{View: v}
	}
	next := map[string]provenance.TreeEntry{}
	for _, e := range tree {
		if e.From == provenance.Unavailable {
			m.Unavailable = append(m.Unavailable, e)
			continue
		}
		next[e.Path] = e
	}
	// Remove deepest first what the new tree does not hold, or holds
	// differently.
	old := make([]string, 0, len(m.have))
	for p := range m.have {
		old = append(old, p)
	}
	slices.Sort(old)
	for _, p := range slices.Backward(old) {
		if n, ok := next[p]; ok && sameEntry(m.have[p], n) {
			continue
		}
		if n, ok := next[p]; ok && n.State.Type == index.TypeDir && m.have[p].State.Type == index.TypeDir {
			continue // a directory stays; its mode is set below
		}
		if err := os.RemoveAll(filepath.Join(m.Dir, p)); err != nil {
			return err
		}
		delete(m.have, p)
		m.Written++
	}
	var files []provenance.TreeEntry
	for _, e := range tree {
		if e.From == provenance.Unavailable {
			continue
		}
		if h, ok := m.have[e.Path]; ok && sameEntry(h, e) {
			continue
		}
		if e.State.Type != index.TypeDir {
			files = append(files, e) // after every directory, below
			continue
		}
		if err := m.write(e); err != nil {
			return fmt.Errorf("write %s: %w", e.Path, err)
		}
		m.have[e.Path] = e
		m.Written++
	}
	return m.writeFiles(files)
}

// writers is how many files are written at a time, per processor.
var writers = 1

// writeFiles writes files (their directories exist) a few at a time:
// reading and writing many small files waits on the disk more than on
// the processor.
func (m *Materialised) writeFiles(files []provenance.TreeEntry) error {
	var wg sync.WaitGroup
	var once sync.Once
	var err error
	slots := make(chan struct{}, writers*runtime.GOMAXPROCS(0))
	for _, e := range files {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if werr := m.write(e); werr != nil {
				once.Do(func() { err = fmt.Errorf("write %s: %w", e.Path, werr) })
			}
		})
	}
	wg.Wait()
	for _, e := range files {
		m.have[e.Path] = e
	}
	m.Written += len(files)
	return err
}

// sameEntry reports whether a and b put the same thing at their path.
func sameEntry(a, b provenance.TreeEntry) bool {
	if a.From != b.From || a.State.Type != b.State.Type || a.State.Mode != b.State.Mode {
		return false
	}
	if a.From == provenance.FromStore {
		return a.State.Hash == b.State.Hash
	}
	return a.State.Size == b.State.Size && a.State.MTime == b.State.MTime
}

// write puts one entry at its path in Dir.
func (m *Materialised) write(e provenance.TreeEntry) error {
	dst := filepath.Join(m.Dir, filepath.FromSlash(e.Path))
	mode := os.FileMode(e.State.Mode & 0o777)
	switch e.State.Type {
	case index.TypeDir:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			os.Remove(dst) // a file a test run left where the directory goes
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		}
		return os.Chmod(dst, mode|0o700) // the test must be able to write beneath it
	case index.TypeFile, index.TypeSymlink:
	default:
		return nil // FIFOs, sockets and devices are not made in a scratch copy
	}
	data, err := m.src.Content(e)
	if err != nil {
		return err
	}
	err = place(dst, data, e.State.Type == index.TypeSymlink, mode|0o600)
	if err != nil {
		// Something a test run left there (a directory, a file where a
		// link goes): the tree's entry replaces it.
		os.RemoveAll(dst)
		err = place(dst, data, e.State.Type == index.TypeSymlink, mode|0o600)
	}
	return err
}

// place writes a file (or a symlink to data) at dst.
func place(dst string, data []byte, link bool, mode os.FileMode) error {
	if link {
		return os.Symlink(string(data), dst)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if err = f.Chmod(mode); err == nil { // a file that was there keeps its mode through O_CREATE
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
