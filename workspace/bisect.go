package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/provenance"
)

// BisectOptions says what ckfs bisect searches.
type BisectOptions struct {
	Test      string        // the shell command: exit 0 good, 125 skip, 1-127 bad, above 127 stops the search
	Good, Bad string        // checkpoints; "" for the start of the timeline and its end
	Timeout   time.Duration // a run that takes longer counts as bad
	Dir       string        // the scratch directory; "" for a temporary one, removed at the end
	Output    *os.File      // where the test's output goes
	Progress  func(BisectStep)
}

// BisectStep is one run of the test.
type BisectStep struct {
	Checkpoint uint64        `json:"checkpoint"`
	After      string        `json:"after,omitempty"` // the window the checkpoint follows
	Verdict    string        `json:"verdict"`         // good, bad, skip
	Exit       int           `json:"exit"`
	TimedOut   bool          `json:"timed_out,omitempty"`
	Took       time.Duration `json:"took_ns"`
	Prepare    time.Duration `json:"prepare_ns"` // writing the checkpoint's tree
	Written    int           `json:"written"`    // paths written or removed to get there
	Missing    int           `json:"unavailable,omitempty"`
	Step, Of   int           `json:"-"`
}

// BisectResult is where the search ended.
type BisectResult struct {
	FirstBad *index.Window `json:"-"`
	Window   string        `json:"first_bad,omitempty"`
	// Candidates are the windows the first bad one is among when skipped
	// runs left it open.
	Candidates []string `json:"candidates,omitempty"`
	// Yours are the paths you changed outside any window in the step that
	// turned bad (with no first bad window: after the last window).
	Yours []string     `json:"yours,omitempty"`
	Steps []BisectStep `json:"steps"`
	Dir   string       `json:"dir,omitempty"` // the scratch directory, when kept
}

// ErrBisectStopped is a test that exited above 127: the search stops, as
// git bisect run's does.
var ErrBisectStopped = errors.New("the test exited above 127: bisect stopped")

// Bisect finds the first window between two checkpoints after which the
// test fails: a binary search over the windows that wrote something, each
// step writing the tree after a window into a scratch directory (only
// what differs from the step before) and running the test there. The
// workspace is only read. Both ends are tested first: a good end that
// fails or a bad end that passes stops it.
func (v *View) Bisect(ctx context.Context, o BisectOptions) (*BisectResult, error) {
	good, bad, wins, err := v.bisectRange(o)
	if err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ckfs-bisect-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	m, err := NewMaterialised(dir)
	if err != nil {
		return nil, err
	}
	b := &bisection{v: v, o: o, m: m, res: &BisectResult{}, of: 2 + bits(len(wins)+1)}
	if o.Dir != "" {
		b.res.Dir = dir
	}
	if s, err := b.run(ctx, bad, ""); err != nil || s.Verdict != "bad" {
		return b.res, endError(err, s, "bad", o.Bad)
	}
	if s, err := b.run(ctx, good, ""); err != nil || s.Verdict != "good" {
		return b.res, endError(err, s, "good", o.Good)
	}
	// wins[i] is bad when the tree after it fails; len(wins) stands for
	// the bad end itself (changes after the last window).
	lo, hi := -1, len(wins) // lo: good (or the good end), hi: bad
	skipped := map[int]bool{}
	for {
		i := pickMiddle(lo, hi, skipped)
		if i < 0 {
			break
		}
		s, err := b.run(ctx, wins[i].Close.Seq, wins[i].ID)
		if err != nil {
			return b.res, err
		}
		switch s.Verdict {
		case "good":
			lo = i
		case "bad":
			hi = i
		default:
			skipped[i] = true
		}
	}
	for i := lo + 1; i < hi; i++ {
		b.res.Candidates = append(b.res.Candidates, wins[i].ID)
	}
	from := good
	if lo >= 0 {
		from = wins[lo].Close.Seq
	}
	if hi == len(wins) {
		b.res.Yours = v.outsidePaths(from, bad) // no window: what changed after the last one
		return b.res, nil
	}
	b.res.FirstBad, b.res.Window = &wins[hi], wins[hi].ID
	if len(b.res.Candidates) > 0 {
		b.res.Candidates = append(b.res.Candidates, wins[hi].ID)
	}
	b.res.Yours = v.outsidePaths(from, wins[hi].Close.Seq)
	return b.res, nil
}

// outsidePaths lists the paths changed outside any window between two
// checkpoints: the user's edits, which a step of the search includes.
func (v *View) outsidePaths(from, to uint64) []string {
	var out []string
	for _, r := range v.Records {
		if r.Seq > from && r.Seq <= to && r.Kind == index.KindOutside && r.Image == index.ImageAfter && !slices.Contains(out, r.Path) {
			out = append(out, r.Path)
		}
	}
	return out
}

// pickMiddle is the untested window nearest the middle of (lo, hi), -1
// when none is left.
func pickMiddle(lo, hi int, skipped map[int]bool) int {
	mid := (lo + hi) / 2
	for d := 0; mid-d > lo || mid+d < hi; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && !skipped[i] {
				return i
			}
		}
	}
	return -1
}

func bits(n int) int {
	b := 0
	for ; n > 1; n = (n + 1) / 2 {
		b++
	}
	return b
}

// endError explains an end of the range that does not hold.
func endError(err error, s BisectStep, want, given string) error {
	if err != nil {
		return err
	}
	name := given
	if name == "" {
		name = map[string]string{"good": "the start of the timeline", "bad": "the end of the timeline"}[want]
	}
	return Errorf(ErrUsage, "the test is %s at %s (checkpoint %d, exit %d), which was given as %s: give --%s CHECKPOINT where it is %s", s.Verdict, name, s.Checkpoint, s.Exit, want, want, want)
}

// bisectRange resolves the ends and lists the windows between them that
// wrote something and closed, in the order they closed.
func (v *View) bisectRange(o BisectOptions) (good, bad uint64, wins []index.Window, err error) {
	all := index.Windows(v.Records)
	if o.Good == "" {
		if len(all) > 0 {
			good = all[0].Open.Seq
		}
	} else if good, err = v.Checkpoint(o.Good); err != nil {
		return 0, 0, nil, err
	}
	if bad, err = v.Checkpoint(orDefault(o.Bad, "now")); err != nil {
		return 0, 0, nil, err
	}
	for _, w := range all {
		if w.Close != nil && w.Close.Seq > good && w.Close.Seq <= bad && (len(w.Paths) > 0 || len(w.Skipped) > 0) {
			wins = append(wins, w)
		}
	}
	slices.SortFunc(wins, func(a, b index.Window) int { return int(a.Close.Seq) - int(b.Close.Seq) })
	if len(wins) == 0 {
		return 0, 0, nil, Errorf(ErrUsage, "no window wrote anything between checkpoints %d and %d: nothing to search", good, bad)
	}
	// The bad end is the tree after the last window in range.
	return good, bad, wins, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// bisection is one search's state.
type bisection struct {
	v   *View
	o   BisectOptions
	m   *Materialised
	res *BisectResult
	of  int
	// live is the workspace as listed at the first step: every step's
	// tree is built from the same listing.
	live []provenance.TreeEntry
}

// run writes the tree at checkpoint seq and runs the test in it.
func (b *bisection) run(ctx context.Context, seq uint64, after string) (BisectStep, error) {
	s := BisectStep{Checkpoint: seq, After: after, Step: len(b.res.Steps) + 1, Of: b.of}
	start := time.Now()
	var err error
	if b.live == nil {
		if b.live, err = b.v.LiveTree(); err != nil {
			return s, err
		}
	}
	if err := b.m.Write(b.v, b.v.TreeFrom(seq, b.live)); err != nil {
		return s, err
	}
	s.Prepare, s.Written, s.Missing = time.Since(start), b.m.Written, len(b.m.Unavailable)
	s.Exit, s.TimedOut, err = b.test(ctx, seq)
	if err != nil {
		return s, err
	}
	s.Took = time.Since(start) - s.Prepare
	switch {
	case s.TimedOut:
		s.Verdict = "bad"
	case s.Exit == 0:
		s.Verdict = "good"
	case s.Exit == 125:
		s.Verdict = "skip"
	case s.Exit > 127:
		b.res.Steps = append(b.res.Steps, s)
		return s, fmt.Errorf("%w (exit %d at checkpoint %d)", ErrBisectStopped, s.Exit, seq)
	default:
		s.Verdict = "bad"
	}
	b.res.Steps = append(b.res.Steps, s)
	if b.o.Progress != nil {
		b.o.Progress(s)
	}
	return s, nil
}

// test runs the test command in the scratch directory with the time
// limit; its exit code, and whether the limit ended it.
func (b *bisection) test(ctx context.Context, seq uint64) (int, bool, error) {
	if b.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.o.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", b.o.Test)
	cmd.Dir = b.m.Dir
	cmd.Env = append(os.Environ(), "CKFS_BISECT_CHECKPOINT="+strconv.FormatUint(seq, 10), "PWD="+b.m.Dir)
	cmd.Stdout, cmd.Stderr = b.o.Output, b.o.Output
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return -1, true, nil
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if exit.ExitCode() < 0 { // killed by a signal
			return 128, false, nil
		}
		return exit.ExitCode(), false, nil
	case err != nil:
		return 0, false, fmt.Errorf("run the test: %w", err)
	}
	return 0, false, nil
}
