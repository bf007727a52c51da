package provenance

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

// Where a path of a checkpoint's tree is served from (TreeEntry.From).
const (
	FromStore   = "store"       // the state the timeline gives at the checkpoint
	FromLive    = "live"        // never recorded and not changed since: the file as it is now
	Unavailable = "unavailable" // the timeline cannot vouch for it: never shown as a guess
)

// TreeEntry is one path of the tree at a checkpoint.
type TreeEntry struct {
	Path   string
	State  index.State // FromStore: the recorded state; FromLive: the live lstat (no hash)
	From   string
	Reason string // Unavailable: why
	// CTime is a live path's status change time (ns since the epoch): a
	// rename or a copy that kept the mtime moves it.
	CTime int64
}

// NotCaptured are the trees a checkpoint's tree leaves out: ckfs never
// records them (git's own files), so no checkpoint holds them.
var NotCaptured = []string{".git"}

// Tree is the whole tree as it was at checkpoint at, checkpointTime being
// the time of its record: every path the timeline records there (content
// from the store), and every path of live (the tree as it is now, lstat
// only) that ckfs never recorded, as it is now, provided its file's
// modification time is before the checkpoint and every directory above it
// existed then. A path the timeline cannot vouch for (its state at the
// checkpoint unknown, its content not stored, or never recorded and
// modified since the checkpoint, where ckfs could not see it) is
// Unavailable. Paths under NotCaptured are left out. Sorted by path.
func Tree(records []index.Record, at uint64, checkpointTime time.Time, live []TreeEntry) []TreeEntry {
	want := index.StateAt(records, at)
	var out []TreeEntry
	for p, e := range want {
		if notCaptured(p) {
			continue
		}
		switch {
		case e.Unknown:
			out = append(out, TreeEntry{Path: p, State: index.State{Type: index.TypeFile}, From: Unavailable, Reason: e.Reason})
		case !e.Exists():
		case e.Type == index.TypeFile && e.Hash == "" && e.Size > 0:
			out = append(out, TreeEntry{Path: p, State: e.State, From: Unavailable, Reason: "its content was not stored"})
		default:
			out = append(out, TreeEntry{Path: p, State: e.State, From: FromStore})
		}
	}
	dirs := map[string]bool{"": true}
	for _, t := range out {
		if t.State.Type == index.TypeDir {
			dirs[t.Path] = true
		}
	}
	cut := checkpointTime.Add(-mtimeSlack).UnixNano()
	slices.SortFunc(live, func(a, b TreeEntry) int { return strings.Compare(a.Path, b.Path) })
	for _, l := range live {
		if _, recorded := want[l.Path]; recorded || notCaptured(l.Path) || !parentsIn(l.Path, dirs) {
			continue
		}
		l.From = FromLive
		if l.State.Type == index.TypeFile || l.State.Type == index.TypeSymlink {
			switch {
			case l.State.MTime > cut:
				l.From, l.Reason = Unavailable, "modified after this checkpoint, and ckfs never recorded it"
			case l.CTime > cut:
				l.From, l.Reason = Unavailable, "renamed or changed after this checkpoint, and ckfs never recorded it"
			}
		}
		if l.State.Type == index.TypeDir {
			dirs[l.Path] = true
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b TreeEntry) int { return strings.Compare(a.Path, b.Path) })
	return addParents(out)
}

// mtimeSlack: file times come from a coarser clock than records' (as
// index.StateAt allows).
const mtimeSlack = 20 * time.Millisecond

// parentsIn reports whether every directory above p is in the tree: one
// recorded as a directory at the checkpoint, or one never recorded (a live
// one, checked before its children since live is sorted).
func parentsIn(p string, dirs map[string]bool) bool {
	d := path.Dir(p)
	if d == "." {
		return true
	}
	if dirs[d] {
		return parentsIn(d, dirs)
	}
	return false
}

func notCaptured(p string) bool {
	for _, n := range NotCaptured {
		if p == n || strings.HasPrefix(p, n+"/") {
			return true
		}
	}
	return false
}

// addParents adds the directories above recorded paths that neither the
// records nor the live tree hold (a directory made and then removed
// around files the timeline restores), as plain directories.
func addParents(out []TreeEntry) []TreeEntry {
	have := map[string]bool{}
	for _, t := range out {
		have[t.Path] = true
	}
	for _, t := range out {
		for d := path.Dir(t.Path); d != "." && !have[d]; d = path.Dir(d) {
			have[d] = true
			out = append(out, TreeEntry{Path: d, State: index.State{Type: index.TypeDir, Mode: 0o755}, From: FromStore})
		}
	}
	slices.SortFunc(out, func(a, b TreeEntry) int { return strings.Compare(a.Path, b.Path) })
	return out
}
