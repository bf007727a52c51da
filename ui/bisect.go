package ui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/workspace"
)

// BisectStep prints one run of ckfs bisect's test (to stderr, as
// progress).
func BisectStep(out io.Writer, s workspace.BisectStep) {
	where := fmt.Sprintf("checkpoint %d", s.Checkpoint)
	if s.After != "" {
		where += " (after " + s.After + ")"
	}
	how := fmt.Sprintf("exit %d", s.Exit)
	if s.TimedOut {
		how = "over the time limit"
	}
	missing := ""
	if s.Missing > 0 {
		missing = fmt.Sprintf("; %s left out (the timeline cannot vouch for them)", english.Count(s.Missing, "path", "paths"))
	}
	fmt.Fprintf(out, "bisect %d/~%d: %s: %s (%s, %s); tree written in %s (%s)%s\n", s.Step, s.Of, where, s.Verdict, how,
		seconds(s.Took), seconds(s.Prepare), english.Count(s.Written, "path", "paths"), missing)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// Bisect prints where ckfs bisect ended: the first bad window, its turn,
// command and diff, and the commands that take it out.
func Bisect(out io.Writer, v *workspace.View, res *workspace.BisectResult) error {
	if res.FirstBad == nil {
		fmt.Fprintln(out, "no window broke it: the test passes after the last window and fails at the bad end")
		if len(res.Yours) > 0 {
			fmt.Fprintf(out, "changed in between, outside any window (yours): %s\n", strings.Join(display(res.Yours), ", "))
		}
		return nil
	}
	w := res.FirstBad
	if len(res.Candidates) > 0 {
		fmt.Fprintf(out, "skipped runs leave the first bad window among: %s\n", strings.Join(res.Candidates, " "))
	}
	fmt.Fprintf(out, "first bad window: %s  %s  %s\n", w.ID, w.Tool, w.Open.Time.Local().Format("2006-01-02 15:04:05"))
	if m := v.TurnOf(w.Open.Seq); m != nil {
		fmt.Fprintf(out, "    turn %d %q\n", m.Mark, Trunc(m.Label, 100))
	}
	if w.Label != "" {
		fmt.Fprintf(out, "    %s\n", Trunc(w.Label, 200))
	}
	if len(res.Yours) > 0 {
		fmt.Fprintf(out, "    (that step also held your own edits: %s)\n", strings.Join(display(res.Yours), ", "))
	}
	fmt.Fprintln(out)
	err := v.Diffs(w.Open.Seq, w.Close.Seq, false, func(d workspace.FileDiff) error {
		FileDiff(out, d, "before "+w.ID, "after "+w.ID)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ntake that call out, keeping what came after: ckfs revert %s\ngo back to just before it:                  ckfs rewind --files --to %s\n", w.ID, w.ID)
	if res.Dir != "" {
		fmt.Fprintf(out, "the last tree tested is in %s\n", res.Dir)
	}
	return nil
}

func display(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = index.Display(p)
	}
	return out
}
