package rewind

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

// Request is one file rewind: to a checkpoint, or a revert of windows,
// previewed or applied, of every recorded path or of some.
type Request struct {
	Target uint64 `json:"target"`
	Force  bool   `json:"force,omitempty"`
	Apply  bool   `json:"apply,omitempty"` // false: preview, write nothing
	Op     string `json:"op,omitempty"`    // operation id; generated if empty
	// Paths restricts the rewind to paths at or under these globs.
	Paths []string `json:"paths,omitempty"`
	// Revert, instead of a checkpoint, takes the changes of these windows
	// out and keeps everything done since (Target is ignored). Markers
	// writes conflicting places with conflict markers instead of refusing.
	Revert  []string `json:"revert,omitempty"`
	Markers bool     `json:"markers,omitempty"`
	// SkipConflicts leaves every path with a conflict as it is (none of
	// the windows' changes to it are taken out) and reverts the rest.
	SkipConflicts bool `json:"skip_conflicts,omitempty"`
	// Exclude leaves out paths at or under these globs.
	Exclude []string `json:"exclude,omitempty"`
	// Describe is how many steps of a preview, in plan order, carry what
	// they do to a file's lines (Step.Change): 0 none, -1 all. A command
	// asks for the steps it prints; reading and diffing the rest would
	// be work nobody sees.
	Describe int `json:"describe,omitempty"`
	// Diff adds each described step's unified diff.
	Diff bool `json:"diff,omitempty"`
}

// Outcome is what a rewind did, or would do.
type Outcome struct {
	Op      string  `json:"op,omitempty"`
	Plan    *Plan   `json:"plan"`
	Report  *Report `json:"report"`
	Applied bool    `json:"applied"`
	// WindowsSince are the windows opened after the target that wrote
	// something: what a revert would take out instead, when the rewind
	// is refused.
	WindowsSince []string `json:"windows_since,omitempty"`
}

// Env is everything a rewind needs.
type Env struct {
	Records []index.Record
	Applier *Applier
	Check   CheckInput
}

// NewOp returns a fresh operation id.
func NewOp() string {
	var b [4]byte
	rand.Read(b[:])
	return "r-" + hex.EncodeToString(b[:])
}

// Run plans req, checks it, and applies it if asked and allowed. A refused
// rewind returns the outcome and a *RefusedError; nothing was written.
func Run(env Env, req Request) (*Outcome, error) {
	last := uint64(0)
	if n := len(env.Records); n > 0 {
		last = env.Records[n-1].Seq
	}
	plan, err := makePlan(env, req, last)
	if err != nil {
		return nil, err
	}
	if len(req.Paths) > 0 {
		if err := plan.matchPaths(req.Paths, false); err != nil {
			return nil, err
		}
		plan.Label = strings.TrimSpace(plan.Label + " paths " + strings.Join(req.Paths, " "))
	}
	if len(req.Exclude) > 0 {
		if err := plan.matchPaths(req.Exclude, true); err != nil {
			return nil, err
		}
		plan.Label = strings.TrimSpace(plan.Label + " except " + strings.Join(req.Exclude, " "))
	}
	if req.SkipConflicts {
		plan.skipConflicts()
	}
	in := env.Check
	in.Force, in.Merge = req.Force, len(req.Revert) > 0
	report := CheckPlan(env.Records, plan, in)
	report.Checks = append(report.Checks, blockedDirs(plan, env.Applier.Dir), ownerCheck(plan), linkCheck(plan, env.Applier.Dir), spaceCheck(plan, env.Applier.Dir))
	if in.Merge {
		report.Checks = append(report.Checks, conflictCheck(plan.Conflicts, req.Markers, req.SkipConflicts), guessCheck(env.Records, req.Revert, plan, req.Force))
	}
	objs := objectCheck(env.Applier.Store, plan.Steps)
	report.Checks = append(report.Checks, objs)
	plan.targetsVerified = objs.OK
	out := &Outcome{Plan: plan, Report: report}
	if !req.Apply {
		steps := plan.Steps
		if req.Describe >= 0 && req.Describe < len(steps) {
			steps = steps[:req.Describe]
		}
		describeChanges(env.Applier, steps, req.Diff)
		if report.Refused() {
			out.WindowsSince = windowsSince(env.Records, plan.Target)
		}
		return out, nil
	}
	if report.Refused() {
		out.WindowsSince = windowsSince(env.Records, plan.Target)
		return out, &RefusedError{Report: report}
	}
	out.Op = req.Op
	if out.Op == "" {
		out.Op = NewOp()
	}
	if err := env.Applier.Apply(plan, out.Op); err != nil {
		return out, rollBackFailed(env.Applier, out.Op, err)
	}
	out.Applied = true
	return out, nil
}

// rollBackFailed puts back at once what a rewind that failed part way had
// changed, as its journal says: only a rollback that fails too (or a
// process killed part way) leaves the journal for ckfs rewind --rollback.
func rollBackFailed(a *Applier, op string, err error) error {
	var ae *ApplyError
	if !errors.As(err, &ae) {
		return err // nothing was changed
	}
	if rerr := a.Rollback(op); rerr != nil {
		ae.Rollback = rerr
		return ae
	}
	return &RolledBackError{Op: op, Err: ae.Err}
}

// makePlan makes the plan of req: to its checkpoint, or a revert.
func makePlan(env Env, req Request, last uint64) (*Plan, error) {
	if len(req.Revert) > 0 {
		p, conflicts, err := revertPlan(env.Records, req.Revert, env.Applier.Dir, env.Applier.Store, req.Markers)
		if err != nil {
			return nil, err
		}
		p.Target, p.Label, p.Conflicts = last, "revert "+strings.Join(req.Revert, " "), conflicts
		return p, nil
	}
	if req.Target > last {
		return nil, fmt.Errorf("checkpoint %d is beyond the end of the timeline (last seq %d)", req.Target, last)
	}
	if err := checkWatermark(env.Records, req.Target); err != nil {
		return nil, err
	}
	return MakePlan(env.Records, req.Target, env.Applier.Dir)
}

// BelowWatermarkError means the target is older than what the retention
// policy keeps: a garbage collection removed content only it needed.
type BelowWatermarkError struct {
	Target, Watermark uint64
	Reason            string
	When              time.Time
}

func (e *BelowWatermarkError) Error() string {
	return fmt.Sprintf("checkpoint %d is no longer restorable: ckfs gc removed what it needs on %s (%s); the oldest restorable checkpoint is %d (ckfs log lists them)",
		e.Target, e.When.Local().Format("2006-01-02 15:04"), e.Reason, e.Watermark)
}

// checkWatermark refuses a target below the timeline's watermark, except
// the undo of the last rewind, whose content every collection keeps.
func checkWatermark(records []index.Record, target uint64) error {
	w, rec := index.Watermark(records)
	if target >= w {
		return nil
	}
	if undo, _, err := UndoTarget(records); err == nil && undo == target {
		return nil
	}
	return &BelowWatermarkError{Target: target, Watermark: w, Reason: rec.Reason, When: rec.Time}
}

// blockedDirs checks that every directory the plan removes holds nothing
// the plan does not remove first: ckfs never deletes a file it has no
// record of.
func blockedDirs(p *Plan, d *Dir) Check {
	removed := map[string]bool{}
	for _, s := range p.Steps {
		if slices.Contains(s.Actions, ActDelete) || slices.Contains(s.Actions, ActRmdir) {
			removed[s.Path] = true
		}
	}
	var blocked []string
	for _, s := range p.Steps {
		if !slices.Contains(s.Actions, ActRmdir) {
			continue
		}
		names, err := d.Entries(s.Path)
		if err != nil {
			blocked = append(blocked, fmt.Sprintf("%s (%v)", index.Display(s.Path), err))
			continue
		}
		for _, n := range names {
			if !removed[s.Path+"/"+n] {
				blocked = append(blocked, index.Display(s.Path+"/"+n))
			}
		}
	}
	return Check{Name: "unrecorded files in removed directories", OK: len(blocked) == 0, Paths: blocked,
		Detail: pick(len(blocked) == 0, "every directory to remove holds only recorded files",
			"these files were never recorded, and the directories that hold them would be removed: move them away first")}
}

// describeChanges sets what each step of a preview does to a file's lines
// (and its diff, with diff): the disk now against the target's content.
// The outcome carries it, so whoever prints it reads nothing again.
func describeChanges(a *Applier, steps []Step, diff bool) {
	for i := range steps {
		s := &steps[i]
		cur, tgt := s.Current.Type, s.Target.Type
		if cur == index.TypeDir || tgt == index.TypeDir || cur.Special() || tgt.Special() {
			continue
		}
		if (cur == index.TypeSymlink || tgt == index.TypeSymlink) && !diff {
			continue
		}
		c := &Change{}
		s.Change = c
		var now, then []byte
		var err error
		if cur != index.TypeAbsent {
			if now, err = a.Dir.Content(s.Path); err != nil {
				c.Unreadable = "cannot read it now: " + err.Error()
				continue
			}
		}
		if !s.Target.Hash.IsZero() {
			if then, err = a.Store.Get(s.Target.Hash); err != nil {
				c.Unreadable = "cannot read the checkpoint's content: " + err.Error()
				continue
			}
		}
		c.Added, c.Removed, c.Binary = LineCounts(now, then)
		if diff {
			c.Diff = UnifiedDiff(index.Display(s.Path), "now", "checkpoint", now, then)
		}
	}
}

// windowsSince are the ids of the windows opened at or after seq that
// wrote something, each once (a window reopened after a daemon's death
// keeps its id): a window's open record is the checkpoint just before it,
// so a rewind to it takes that window's changes out too, and a revert of
// a window that wrote nothing has nothing to take out.
func windowsSince(records []index.Record, seq uint64) []string {
	var ids []string
	for _, w := range index.Windows(records) {
		if w.Open.Seq >= seq && len(w.Paths)+len(w.Skipped) > 0 && !slices.Contains(ids, w.ID) {
			ids = append(ids, w.ID)
		}
	}
	return ids
}
