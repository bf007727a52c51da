// Package rewind puts the workspace back to a checkpoint. It holds the pure
// planner (target state vs the disk, for recorded paths only), the safety
// checks that refuse to destroy a change ckfs never recorded, and the
// two-phase applier with its journal, rollback and undo. It is the only
// code in ckfs that overwrites the user's files.
package rewind

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
)

// Action is what a step does to one path.
type Action string

// The actions, in the order a plan applies them.
const (
	ActDelete   Action = "delete"   // remove a file, symlink or special file
	ActRmdir    Action = "rmdir"    // remove a directory
	ActMkdir    Action = "mkdir"    // create a directory
	ActRestore  Action = "restore"  // write a file's content (and mode)
	ActRecreate Action = "recreate" // write a file, symlink or special file that does not exist now
	ActRelink   Action = "relink"   // replace a symlink's target
	ActChmod    Action = "chmod"    // change the mode only
	ActMetadata Action = "metadata" // change the owner or extended attributes (and the mode)
)

// Step changes one path from its state on disk to its target state.
type Step struct {
	Path    string      `json:"path"`
	Actions []Action    `json:"actions"` // usually one; a type change removes then creates
	Current index.State `json:"current"`
	Target  index.State `json:"target"`
	// Change is what a preview's step does to the lines of a file (or a
	// symlink's target, with Request.Diff), for people; nil where there
	// are no lines to count (directories, special files, an applied
	// rewind).
	Change *Change `json:"change,omitempty"`
}

// Change is what a step does to a file's lines.
type Change struct {
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	Binary  bool `json:"binary,omitempty"`
	// Unreadable says why a side could not be read (then nothing else is
	// set).
	Unreadable string `json:"unreadable,omitempty"`
	// Diff is the unified diff from now to the target, when asked for.
	Diff string `json:"diff,omitempty"`
}

// Unrestorable is a path whose target content ckfs does not have.
type Unrestorable struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Plan is everything a rewind to Target would change.
type Plan struct {
	Target        uint64         `json:"target"`
	Label         string         `json:"label,omitempty"` // a revert's windows, a path restriction
	Steps         []Step         `json:"steps"`
	CannotRestore []Unrestorable `json:"cannot_restore,omitempty"`
	Conflicts     []Conflict     `json:"conflicts,omitempty"` // a revert's

	targetsVerified bool // every target object was verified by Run's checks
}

// Disk reads the current state of a path: with the hash of its content
// (not stored), or its stat alone.
type Disk interface {
	State(rel string) (index.State, error)
	Stat(rel string) (index.State, error)
}

// MakePlan compares the state at target with the disk, for every recorded
// path, and returns the steps that make the disk equal to the target. It
// reads the disk and nothing else.
func MakePlan(records []index.Record, target uint64, disk Disk) (*Plan, error) {
	want := index.StateAt(records, target)
	var last map[string]*index.Record // made for the first unstored entry
	p := &Plan{Target: target}
	paths := make([]string, 0, len(want))
	for path := range want {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	for _, path := range paths {
		e := want[path]
		if e.Unknown {
			if e.Kind == index.KindSkip && last == nil {
				last = index.LastImage(records)
			}
			same, err := unchangedSince(disk, path, e, last[path])
			if err != nil {
				return nil, err
			}
			if !same {
				p.CannotRestore = append(p.CannotRestore, Unrestorable{Path: path, Reason: e.Reason})
			}
			continue
		}
		cur, err := disk.State(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if acts := actions(cur, e.State); len(acts) > 0 {
			p.Steps = append(p.Steps, Step{Path: path, Actions: acts, Current: cur, Target: e.State})
		}
	}
	return p, nil
}

// unchangedSince reports whether path, whose content at the checkpoint was
// not stored (a skip record decides its state there: over the size limit,
// or the store's disk was full), is still as that record found it: nothing
// recorded after it, and the same type, size, modification time and mode
// on disk. A rewind then has nothing to do for it, and nothing to say.
func unchangedSince(disk Disk, path string, e index.Entry, last *index.Record) (bool, error) {
	if e.Kind != index.KindSkip || e.Type != index.TypeFile || last == nil || last.Seq != e.Seq {
		return false, nil
	}
	cur, err := disk.Stat(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return cur.Type == e.Type && cur.Size == e.Size && cur.MTime == e.MTime && cur.Mode == e.Mode, nil
}

// actions returns what turns cur into want; nil if they are the same
// (times are not compared).
func actions(cur, want index.State) []Action {
	if cur.Type == want.Type {
		switch {
		case cur.Type == index.TypeAbsent:
			return nil
		case cur.Hash != want.Hash && cur.Type == index.TypeFile:
			return []Action{ActRestore}
		case cur.Hash != want.Hash && cur.Type == index.TypeSymlink:
			return []Action{ActRelink}
		case cur.Rdev != want.Rdev:
			return []Action{ActDelete, ActRecreate} // another device: a new node
		case want.HasMeta() && ((canChown && cur.Owner != want.Owner) || cur.XAttrs != want.XAttrs):
			return []Action{ActMetadata}
		case cur.Mode != want.Mode && cur.Type != index.TypeSymlink:
			return []Action{ActChmod}
		}
		return nil
	}
	var out []Action
	switch {
	case cur.Type == index.TypeFile || cur.Type == index.TypeSymlink || cur.Type.Special():
		out = append(out, ActDelete)
	case cur.Type == index.TypeDir:
		out = append(out, ActRmdir)
	}
	switch {
	case want.Type == index.TypeFile || want.Type == index.TypeSymlink || want.Type.Special():
		out = append(out, ActRecreate)
	case want.Type == index.TypeDir:
		out = append(out, ActMkdir)
	}
	return out
}

// Ordered returns the plan's operations in a safe order: removals of files,
// then directories deepest first, then new directories shallowest first,
// then contents, then modes (directories last, deepest first, so a
// read-only directory is made so after its children are written).
func (p *Plan) Ordered() []PathAction {
	var ops []PathAction
	for _, s := range p.Steps {
		for _, a := range s.Actions {
			ops = append(ops, PathAction{Step: s, Action: a})
		}
	}
	rank := map[Action]int{ActDelete: 0, ActRmdir: 1, ActMkdir: 2, ActRestore: 3, ActRecreate: 3, ActRelink: 3, ActChmod: 4, ActMetadata: 4}
	depth := func(p string) int { return strings.Count(p, "/") }
	slices.SortStableFunc(ops, func(a, b PathAction) int {
		if ra, rb := rank[a.Action], rank[b.Action]; ra != rb {
			return ra - rb
		}
		switch a.Action {
		case ActRmdir, ActChmod, ActMetadata:
			if da, db := depth(a.Path), depth(b.Path); da != db {
				return db - da
			}
		case ActMkdir:
			if da, db := depth(a.Path), depth(b.Path); da != db {
				return da - db
			}
		}
		return strings.Compare(a.Path, b.Path)
	})
	return ops
}

// PathAction is one action on one path. ("Op" names a rewind's
// operation id, and nothing else.)
type PathAction struct {
	Step
	Action Action
}

// Summary counts the plan's steps by their first action.
func (p *Plan) Summary() map[Action]int {
	out := map[Action]int{}
	for _, s := range p.Steps {
		out[s.Actions[len(s.Actions)-1]]++
	}
	return out
}
