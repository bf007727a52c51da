package rewind

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"golang.org/x/sys/unix"
)

// ErrRefused means a safety check refused the rewind; nothing was written.
var ErrRefused = errors.New("rewind refused")

// Check is the result of one safety check.
type Check struct {
	Name   string   `json:"name"`
	OK     bool     `json:"ok"`
	Warn   bool     `json:"warning,omitempty"` // passed, but the user should know
	Detail string   `json:"detail"`
	Paths  []string `json:"paths,omitempty"`
}

// Report is the result of every safety check.
type Report struct {
	Checks []Check `json:"checks"`
}

// Refused reports whether any check failed.
func (r *Report) Refused() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return true
		}
	}
	return false
}

// Forceable reports whether every failed check is one --force overrides.
func (r *Report) Forceable() bool {
	for _, c := range r.Checks {
		if !c.OK && c.Name != checkUnrecorded && c.Name != checkOwnEdits && c.Name != checkGuessed {
			return false
		}
	}
	return true
}

// The checks --force overrides.
const (
	checkUnrecorded = "unrecorded changes"
	checkOwnEdits   = "your own edits"
	checkGuessed    = "guessed attribution"
)

// RefusedError carries the report of a refused rewind.
type RefusedError struct{ Report *Report }

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("rewind refused; nothing was changed:")
	for _, c := range e.Report.Checks {
		if !c.OK {
			fmt.Fprintf(&b, "\n  %s: %s", c.Name, c.Detail)
			for _, p := range c.Paths {
				fmt.Fprintf(&b, "\n    %s", p)
			}
		}
	}
	if e.Report.Forceable() {
		b.WriteString("\nways out: to take out only what tool calls did and keep your changes, ckfs revert WINDOW (ckfs log lists the windows); or leave these files out by naming the others after --; or rerun with --force to overwrite them (they are captured first, so ckfs rewind --undo brings them back)")
	}
	return b.String()
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// CheckInput is what the safety checks look at.
type CheckInput struct {
	StoreRoot   string   // the root the store serves
	WorkRoot    string   // the directory being rewound
	Pending     []string // op ids of pending journals
	OpenWindows []string
	Force       bool
	// Merge is set for a revert, which keeps the user's own edits: they
	// are merged around, not overwritten.
	Merge bool
	// Git, if set, returns which of paths have uncommitted changes in git.
	Git func(paths []string) ([]string, error)
	// GitSince, if set, returns git's own files (HEAD, its log, the
	// index, refs) changed after a time: ckfs never captures or rewinds
	// them.
	GitSince func(time.Time) []string
}

// CheckPlan runs every safety check on plan. Only the paths the plan
// touches are checked, against their last record.
func CheckPlan(records []index.Record, plan *Plan, in CheckInput) *Report {
	r := &Report{}
	add := func(c Check) { r.Checks = append(r.Checks, c) }

	add(Check{Name: "root", OK: in.StoreRoot == in.WorkRoot,
		Detail: pick(in.StoreRoot == in.WorkRoot, "the store serves "+in.WorkRoot,
			fmt.Sprintf("the store serves %s, not %s", in.StoreRoot, in.WorkRoot))})
	add(Check{Name: "journal", OK: len(in.Pending) == 0, Paths: in.Pending,
		Detail: pick(len(in.Pending) == 0, "no unfinished rewind",
			"an earlier rewind did not finish: run ckfs rewind --rollback OP (puts back what was there) or --abandon OP")})
	add(Check{Name: "windows", OK: len(in.OpenWindows) == 0, Paths: in.OpenWindows,
		Detail: pick(len(in.OpenWindows) == 0, "no window is open",
			"a tool window is open (a tool may be writing): close it with ckfs window close")})

	last := index.LastImage(records)
	mine := changedByYouSince(records, plan.Target)
	var dirty, outside, newer, touched []string
	for _, s := range plan.Steps {
		touched = append(touched, s.Path)
		rec := last[s.Path]
		if rec == nil {
			continue
		}
		cur := s.Current
		lastSt := *rec.State
		same := cur.Type == lastSt.Type && cur.Mode == lastSt.Mode && cur.Rdev == lastSt.Rdev && (cur.Hash == lastSt.Hash || (rec.Kind == index.KindSkip && cur.Size == lastSt.Size && cur.MTime == lastSt.MTime))
		if cur.Type == index.TypeDir && lastSt.Type == index.TypeDir {
			same = cur.Mode == lastSt.Mode
		}
		if lastSt.HasMeta() && (cur.Owner != lastSt.Owner || cur.XAttrs != lastSt.XAttrs) {
			same = false // owner or extended attributes changed unrecorded
		}
		switch {
		case !same:
			dirty = append(dirty, fmt.Sprintf("%s (on disk: %s; last recorded: %s)", index.Display(s.Path), describe(cur), describe(lastSt)))
		case mine[s.Path] && !in.Merge:
			outside = append(outside, index.Display(s.Path))
		case cur.Type != index.TypeDir && cur.MTime > lastSt.MTime:
			newer = append(newer, index.Display(s.Path))
		}
	}
	add(Check{Name: checkUnrecorded, OK: len(dirty) == 0 || in.Force, Warn: len(dirty) > 0, Paths: dirty,
		Detail: pick(len(dirty) == 0, "every file the rewind touches is as ckfs last recorded it",
			pick(in.Force, "--force: these changes ckfs never recorded will be captured, then overwritten",
				"these files changed in a way ckfs never recorded"))})
	add(Check{Name: checkOwnEdits, OK: len(outside) == 0 || in.Force, Warn: len(outside) > 0, Paths: outside,
		Detail: pick(len(outside) == 0, "no file the rewind touches was changed by you (outside a tool window) since the checkpoint",
			pick(in.Force, "--force: you changed these (outside any window) since the checkpoint, and your change will be overwritten",
				"you changed these outside any tool window since the checkpoint (or while ckfs was not mounted), and the rewind would drop your change"))})
	add(Check{Name: "modification times", OK: true, Warn: len(newer) > 0, Paths: newer,
		Detail: pick(len(newer) == 0, "no newer modification times",
			"content as recorded but touched since (newer mtime); nothing is lost")})
	if in.GitSince != nil && len(touched) > 0 {
		if moved := in.GitSince(checkpointTime(records, plan.Target)); len(moved) > 0 {
			add(Check{Name: "git history", OK: true, Warn: true, Paths: moved,
				Detail: "git's own files changed since the checkpoint (a commit, checkout, reset or git add); ckfs does not rewind .git, so afterwards git status compares the rewound files with git's HEAD and index as they are now"})
		}
	}
	if in.Git != nil && len(touched) > 0 {
		mod, err := in.Git(touched)
		switch {
		case err != nil:
			add(Check{Name: "git", OK: true, Warn: true, Detail: "git status failed: " + err.Error()})
		default:
			add(Check{Name: "git", OK: true, Warn: len(mod) > 0, Paths: mod,
				Detail: pick(len(mod) == 0, "git shows no uncommitted changes in these files",
					fmt.Sprintf("git shows uncommitted changes in %d of the files the rewind touches; ckfs captures them before overwriting (ckfs rewind --undo)", len(mod)))})
		}
	}
	return r
}

// checkpointTime is when checkpoint seq was taken: the time of its record,
// or of the first record for a checkpoint before every record.
func checkpointTime(records []index.Record, seq uint64) time.Time {
	i := sort.Search(len(records), func(i int) bool { return records[i].Seq > seq })
	switch {
	case i > 0:
		return records[i-1].Time
	case len(records) > 0:
		return records[0].Time
	}
	return time.Time{}
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func describe(s index.State) string {
	switch s.Type {
	case index.TypeAbsent:
		return "absent"
	case index.TypeDir:
		return fmt.Sprintf("directory %o", s.Mode)
	case index.TypeSymlink:
		return "symlink " + short(string(s.Hash))
	case index.TypeChar, index.TypeBlock:
		return fmt.Sprintf("%s %d:%d mode %o", s.Type, unix.Major(s.Rdev), unix.Minor(s.Rdev), s.Mode)
	case index.TypeFIFO, index.TypeSocket:
		return fmt.Sprintf("%s mode %o", s.Type, s.Mode)
	}
	return fmt.Sprintf("%d bytes %s mode %o", s.Size, short(string(s.Hash)), s.Mode)
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// changedByYouSince returns the paths that a change outside every window
// (the user's own: an outside post-image, made through the mount or found
// on disk) changed after checkpoint target. A rewind to target would drop
// that change, even where a tool call changed the path again later. An
// outside pre-image taken for a handle still open at a boundary changes
// nothing and does not count, nor does a change found in the period that
// target starts (index.StateAt counts it as there at target).
func changedByYouSince(records []index.Record, target uint64) map[string]bool {
	prev := map[string]index.State{}
	out := map[string]bool{}
	bound := uint64(0)
	for i := range records {
		r := &records[i]
		if r.IsBoundary() {
			bound = r.Seq
		}
		if !r.IsImage() {
			continue
		}
		p, seen := prev[r.Path]
		atTarget := index.FoundAt(r, bound, target)
		if r.Seq > target && r.Kind == index.KindOutside && !r.IsPreImage() && !atTarget && (!seen || !p.SameContent(*r.State)) {
			out[r.Path] = true
		}
		prev[r.Path] = *r.State
	}
	return out
}

// guessCheck refuses a revert of windows some of whose changes the plan
// would take out on a guess: they were written while several windows were
// open and the writer could not be matched to its call (by "guess"), so
// they may be another call's, or the user's. --force reverts them anyway.
func guessCheck(records []index.Record, windows []string, plan *Plan, force bool) Check {
	reverted := map[string]bool{}
	for _, w := range windows {
		reverted[w] = true
	}
	planned := map[string]bool{}
	for _, s := range plan.Steps {
		planned[s.Path] = true
	}
	seen := map[string]bool{}
	var guessed []string
	for i := range records {
		r := &records[i]
		if r.By == index.ByGuess && reverted[r.Window] && planned[r.Path] && !seen[r.Path] {
			seen[r.Path] = true
			guessed = append(guessed, index.Display(r.Path)+" (window "+r.Window+")")
		}
	}
	return Check{Name: checkGuessed, OK: len(guessed) == 0 || force, Warn: len(guessed) > 0, Paths: guessed,
		Detail: pick(len(guessed) == 0, "every change it takes out was matched to its window by the writing process",
			pick(force, "--force: these changes were credited to the window on a guess (several windows were open and the writer could not be matched) and are taken out anyway",
				"these changes were credited to the window on a guess (several windows were open and the writer could not be matched): they may be another call's or yours; check them (ckfs diff), leave them out (-- PATH...), or --force"))}
}
