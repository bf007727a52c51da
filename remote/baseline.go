package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/beneath"
	"github.com/ckfs-dev/ckfs/internal/english"
	"golang.org/x/sys/unix"
)

// A baseline is what the capture never walks: the files of the workspace
// that no record names. The first push lists every path under the root
// (the capture's exclusions apply, so .git is not in it) with its state,
// and uploads each content as an object. A restore takes a path's state
// from the timeline when any record names the path, and from the baseline
// otherwise: a path no window ever touched held the same at every
// checkpoint.

// BaselineEntry is one line of a baseline manifest.
type BaselineEntry struct {
	Path string `json:"path"` // as in records (index.EncodePath)
	index.State
	// Skip says why the content is not in the bucket (over the size
	// limit, unreadable); a restore cannot bring such a path back.
	Skip string `json:"skip,omitempty"`
}

// baselineOptions say what a baseline leaves out.
type baselineOptions struct {
	excluded    func(rel string) bool
	maxFileSize int64 // larger files are listed with Skip; 0: no limit
}

// takeBaseline walks the directory dir and returns the manifest entries in
// path order, handing each content to store (which uploads it) as it goes.
// Every path is resolved from dir's descriptor, never joined to dir's
// name: a path as long as the kernel allows inside the workspace is
// reached however long dir's own path is, and by internal/beneath's
// policy (no symlink on the way, never out of dir).
func takeBaseline(ctx context.Context, dir string, o baselineOptions, store func(data []byte) (cas.Hash, error)) ([]BaselineEntry, error) {
	rootFd, err := unix.Open(dir, beneath.DirFlags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(rootFd)
	root := beneath.NewFS(rootFd)
	var out []BaselineEntry
	err = fs.WalkDir(root, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rel == "." {
			return nil
		}
		if o.excluded(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		st, err := root.Lstat(rel)
		if err != nil {
			return err
		}
		sys, _ := st.Sys().(*unix.Stat_t)
		var mode uint32
		if sys != nil {
			mode = uint32(sys.Mode)
		}
		typ, ok := index.TypeOfMode(mode)
		if !ok {
			return nil
		}
		e := BaselineEntry{Path: index.EncodePath(rel), State: index.State{Type: typ, Mode: mode & 0o7777, MTime: st.ModTime().UnixNano()}}
		var content []byte
		switch typ {
		case index.TypeFile:
			e.Size = st.Size()
			if o.maxFileSize > 0 && st.Size() > o.maxFileSize {
				e.Skip = fmt.Sprintf("larger than the capture limit of %s", english.Size(o.maxFileSize))
				break
			}
			if content, err = readRegular(root, rel); err != nil {
				e.Skip = "unreadable: " + err.Error()
				break
			}
			e.Size = int64(len(content))
		case index.TypeSymlink:
			t, err := root.ReadLink(rel)
			if err != nil {
				return err
			}
			content = []byte(t)
			e.Size = int64(len(content))
		case index.TypeChar, index.TypeBlock:
			e.Skip = "a device node"
		}
		if content != nil || (typ == index.TypeFile && e.Skip == "") {
			h, err := store(content)
			if err != nil {
				return err
			}
			e.Hash = h
		}
		out = append(out, e)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// encodeBaseline renders a manifest: one JSON object per line.
func encodeBaseline(es []BaselineEntry) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := range es {
		enc.Encode(&es[i]) // a struct of strings and numbers: cannot fail
	}
	return b.Bytes()
}

// ParseBaseline reads a manifest strictly: every line a known object with
// a valid path and state, each path once.
func ParseBaseline(data []byte) ([]BaselineEntry, error) {
	var out []BaselineEntry
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var e BaselineEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("baseline line %d: %w", line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("baseline line %d: data after the object", line)
		}
		p, err := index.DecodePath(e.Path)
		if err == nil {
			err = index.ValidatePath(p)
		}
		if err == nil {
			err = e.State.Validate(e.Skip != "")
		}
		if err == nil && (e.Type == index.TypeAbsent || strings.ContainsRune(e.Skip, '\n')) {
			err = errors.New("not a path that exists")
		}
		if err == nil && seen[e.Path] {
			err = errors.New("path listed twice")
		}
		if err != nil {
			return nil, fmt.Errorf("baseline line %d: %w", line, err)
		}
		seen[e.Path] = true
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, errors.New("baseline: the last line is not whole")
	}
	return out, nil
}

// readRegular reads the regular file at p without following a symlink put
// there since it was listed: the baseline never uploads what lies outside
// the workspace.
func readRegular(root beneath.FS, p string) ([]byte, error) {
	f, err := root.OpenFile(p, unix.O_RDONLY|unix.O_NONBLOCK) // NONBLOCK: a FIFO put there never blocks the walk
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no longer a regular file", p)
	}
	return io.ReadAll(f)
}
