package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
)

// Timeline downloads a workspace's head and its records, each segment
// checked against its address and every record validated as a local load
// validates it.
func Timeline(ctx context.Context, b *Bucket, ws string) (*Head, []index.Record, error) {
	if !ValidWorkspace(ws) {
		return nil, nil, workspace.Errorf(workspace.ErrUsage, "bad workspace id %q (ckfs workspaces --remote lists them)", ws)
	}
	head, _, err := b.readHead(ctx, ws)
	if err != nil {
		return nil, nil, err
	}
	if head == nil {
		return nil, nil, workspace.Errorf(workspace.ErrUsage, "no workspace %s in %s (ckfs workspaces --remote %s lists them)", ws, b, b)
	}
	if !head.Dropped.IsZero() {
		return nil, nil, workspace.Errorf(workspace.ErrRefused, "workspace %s was dropped from %s on %s: nobody had pushed to it since %s", ws, b, head.Dropped.Local().Format(time.DateTime), head.Updated.Local().Format(time.DateTime))
	}
	var recs []index.Record
	var last uint64
	for i, s := range head.Timeline {
		data, err := b.getObject(ctx, s.Object)
		if err != nil {
			return nil, nil, err
		}
		n := 0
		err = index.Scan(bytes.NewReader(data), func(r *index.Record) error {
			if r.Seq <= last {
				return fmt.Errorf("seq %d does not follow seq %d", r.Seq, last)
			}
			last = r.Seq
			recs = append(recs, *r)
			n++
			return nil
		})
		if err == nil && (int64(len(data)) != s.Bytes || recs[len(recs)-n].Seq != s.FirstSeq || last != s.LastSeq) {
			err = errors.New("does not hold what the head says")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: workspace %s, timeline segment %d (%s): %w", b, ws, i, s.Object, err)
		}
	}
	return head, recs, nil
}

// RestoreOptions say what to restore where.
type RestoreOptions struct {
	Workspace  string
	Checkpoint string // a seq, a window id (just before it), or "now"
	Dir        string // a new or empty directory
	// Partial restores what can be and lists the rest, instead of refusing
	// when a path's content at the checkpoint is not known.
	Partial bool
}

// RestoreResult says what a restore wrote.
type RestoreResult struct {
	Workspace  string   `json:"workspace"`
	Checkpoint uint64   `json:"checkpoint"`
	Dir        string   `json:"dir"`
	Files      int      `json:"files"`
	Dirs       int      `json:"dirs"`
	Links      int      `json:"links"`
	Bytes      int64    `json:"bytes"`
	Left       []string `json:"left,omitempty"` // paths not restored, each with why
}

// Restore materializes a checkpoint of a workspace in the bucket into
// opts.Dir, byte for byte: every content is checked against its address
// as it arrives. It builds the tree in a new directory beside Dir and
// renames it into place at the end, so Dir is either untouched or
// complete; it refuses a Dir that is not empty, and (unless Partial) a
// checkpoint where a path's content is not known.
func Restore(ctx context.Context, b *Bucket, o RestoreOptions) (*RestoreResult, error) {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, workspace.Errorf(workspace.ErrRefused, "%s is not empty: a restore writes only into a new or empty directory; nothing was changed", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	head, recs, err := Timeline(ctx, b, o.Workspace)
	if err != nil {
		return nil, err
	}
	cp := uint64(0)
	if o.Checkpoint != "" {
		if cp, err = (&workspace.View{Records: recs}).Checkpoint(o.Checkpoint); err != nil {
			return nil, err
		}
	} else if len(recs) > 0 {
		cp = recs[len(recs)-1].Seq
	}
	// The bucket's retention, or the workspace's own before it was
	// pushed (a watermark record in its timeline).
	local, _ := index.Watermark(recs)
	if w := max(head.Watermark, local); cp < w {
		return nil, workspace.Errorf(workspace.ErrRefused, "checkpoint %d of workspace %s is no longer restorable from %s: its retention keeps checkpoints from seq %d on", cp, o.Workspace, b, w)
	}
	plan, left, err := restorePlan(ctx, b, head, recs, cp)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{Workspace: o.Workspace, Checkpoint: cp, Dir: dir, Left: left}
	if len(left) > 0 && !o.Partial {
		return res, workspace.Errorf(workspace.ErrRefused, "checkpoint %d of workspace %s cannot be restored whole; nothing was written:\n  %s\nrestore the rest with --partial", cp, o.Workspace, strings.Join(left, "\n  "))
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), ".ckfs-restore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage) // gone once renamed; removed on failure
	if err := writeTree(ctx, b, stage, plan, res); err != nil {
		return nil, fmt.Errorf("restore into %s failed, nothing was changed: %w", dir, err)
	}
	// The tree's top is an ordinary directory, as a checkout's is.
	if err := os.Chmod(stage, 0o755); err != nil {
		return nil, err
	}
	// rename(2) replaces an empty directory; a missing one is created.
	if err := os.Rename(stage, dir); err != nil {
		return nil, fmt.Errorf("restore into %s failed, nothing was changed: %w", dir, err)
	}
	return res, durable.SyncDir(filepath.Dir(dir))
}

// planned is one path to write.
type planned struct {
	rel string
	index.State
}

// restorePlan is the state of every path at cp: from the timeline where a
// record names the path, else from the baseline. It also returns what
// cannot be restored.
func restorePlan(ctx context.Context, b *Bucket, head *Head, recs []index.Record, cp uint64) ([]planned, []string, error) {
	var plan []planned
	var left []string
	state := index.StateAt(recs, cp)
	for p, e := range state {
		switch {
		case e.Unknown:
			left = append(left, fmt.Sprintf("%s: %s", index.Display(p), e.Reason))
		case e.Exists():
			plan = append(plan, planned{p, e.State})
		}
	}
	if head.Baseline != nil {
		data, err := b.getObject(ctx, head.Baseline.Object)
		if err != nil {
			return nil, nil, err
		}
		base, err := ParseBaseline(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: workspace %s: %w", b, head.Workspace, err)
		}
		for _, e := range base {
			p, _ := index.DecodePath(e.Path) // ParseBaseline checked it
			if _, recorded := state[p]; recorded || goneAt(state, p) {
				continue
			}
			if e.Skip != "" {
				left = append(left, fmt.Sprintf("%s: %s", index.Display(p), e.Skip))
				continue
			}
			plan = append(plan, planned{p, e.State})
		}
	} else {
		left = append(left, "(every path no record names: the workspace's baseline was never pushed)")
	}
	// A path below something that is not a directory at the checkpoint
	// cannot be (a timeline that says both is damaged): it is listed, and
	// never written through a symlink or into a file.
	types := make(map[string]index.FileType, len(plan))
	for _, p := range plan {
		types[p.rel] = p.Type
	}
	plan = slices.DeleteFunc(plan, func(p planned) bool {
		for d := path.Dir(p.rel); d != "."; d = path.Dir(d) {
			if t, ok := types[d]; ok && t != index.TypeDir {
				left = append(left, fmt.Sprintf("%s: below %s, which is a %s at the checkpoint", index.Display(p.rel), index.Display(d), t))
				return true
			}
		}
		return false
	})
	sort.Slice(plan, func(i, j int) bool { return plan[i].rel < plan[j].rel })
	sort.Strings(left)
	return plan, left, nil
}

// goneAt reports whether a directory above p is recorded as something
// other than a directory at the checkpoint: then p went with it.
func goneAt(state map[string]index.Entry, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if e, ok := state[d]; ok && !e.Unknown && e.Type != index.TypeDir {
			return true
		}
	}
	return false
}

// writeTree writes plan under stage: the directories, then the files with
// contents downloaded and checked on uploadWorkers goroutines, then the
// symlinks (so that no write ever goes through one), then the directories'
// modes and times deepest first; and the filesystem is flushed.
func writeTree(ctx context.Context, b *Bucket, stage string, plan []planned, res *RestoreResult) error {
	// Every path is resolved from the stage's descriptor, never joined to
	// its name: a path as long as the kernel allows inside the workspace
	// is written however long the stage's own path is.
	root, err := os.OpenRoot(stage)
	if err != nil {
		return err
	}
	defer root.Close()
	var dirs, files, links []planned
	for _, p := range plan {
		if p.Type == index.TypeSymlink {
			links = append(links, p)
			continue
		}
		if p.Type == index.TypeDir {
			dirs = append(dirs, p)
			if err := root.MkdirAll(filepath.FromSlash(p.rel), 0o700); err != nil {
				return err
			}
		} else {
			files = append(files, p)
		}
	}
	var mu sync.Mutex
	err = forEach(ctx, len(files), func(i int) error {
		n, err := writeOne(ctx, b, root, files[i])
		mu.Lock()
		res.Bytes += n
		res.Files++
		mu.Unlock()
		return err
	})
	if err != nil {
		return err
	}
	for _, l := range links {
		n, err := writeOne(ctx, b, root, l)
		if err != nil {
			return err
		}
		res.Bytes += n
		res.Links++
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].rel > dirs[j].rel })
	for _, d := range dirs {
		p := filepath.FromSlash(d.rel)
		if err := root.Chmod(p, fs.FileMode(d.Mode)&fs.ModePerm|unixMode(d.Mode)); err != nil {
			return err
		}
		mt := time.Unix(0, d.MTime)
		root.Chtimes(p, mt, mt)
		res.Dirs++
	}
	// One flush of the filesystem for the whole tree, before it is
	// renamed into place.
	return durable.SyncFS(stage)
}

// writeOne writes one file, symlink or FIFO, and returns its size.
func writeOne(ctx context.Context, b *Bucket, root *os.Root, p planned) (int64, error) {
	dst := filepath.FromSlash(p.rel)
	if err := root.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, err
	}
	var data []byte
	if p.Type == index.TypeFile || p.Type == index.TypeSymlink {
		h, err := cas.ParseHash(string(p.Hash))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", index.Display(p.rel), err)
		}
		if data, err = b.getObject(ctx, h); err != nil {
			return 0, fmt.Errorf("%s: %w", index.Display(p.rel), err)
		}
	}
	switch p.Type {
	case index.TypeSymlink:
		return int64(len(data)), root.Symlink(string(data), dst)
	case index.TypeFIFO:
		if err := mkfifoIn(root, dst, p.Mode&0o777); err != nil {
			return 0, err
		}
		return 0, root.Chmod(dst, fs.FileMode(p.Mode)&fs.ModePerm|unixMode(p.Mode))
	case index.TypeFile:
	default:
		return 0, fmt.Errorf("%s: a %s cannot be restored", index.Display(p.rel), p.Type)
	}
	f, err := root.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(fs.FileMode(p.Mode)&fs.ModePerm | unixMode(p.Mode))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	mt := time.Unix(0, p.MTime)
	return int64(len(data)), root.Chtimes(dst, mt, mt)
}

// unixMode turns the sticky bit into Go's mode bits. Setuid and setgid are
// not restored: the files belong to whoever restores them, and a bucket
// must not be a way to make a setuid program of theirs.
func unixMode(m uint32) fs.FileMode {
	var out fs.FileMode
	if m&unix.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}
