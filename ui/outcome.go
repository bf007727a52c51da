package ui

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/rewind"
)

// OutcomeText is how a rewind or a revert names itself.
type OutcomeText struct {
	Verb  string // "rewind the files to", "revert"
	Done  string // "rewound the files to", "reverted"
	What  string // the checkpoint, the windows
	Apply string // how to carry out a preview
}

// Outcome prints a rewind's or a revert's outcome as JSON, or for people
// (printOutcome), reading the contents it compares from v; paths name a
// path restriction.
func Outcome(out io.Writer, o *rewind.Outcome, t OutcomeText, paths []string, asJSON, diff bool, limit int) {
	switch {
	case o == nil:
	case asJSON:
		JSON(out, o)
	default:
		if len(paths) > 0 {
			t.What += " (only " + strings.Join(paths, " ") + ")"
		}
		printOutcome(out, t, o, diff, limit)
	}
}

// printOutcome prints a rewind or its preview, short answers first: what
// it does in one line, one line per file with its +/- counts (at most
// limit, 0 for all), the conflicts of a revert, the refusals and warnings,
// then the verdict. diff adds each file's unified diff, and every conflict.
func printOutcome(out io.Writer, t OutcomeText, o *rewind.Outcome, diff bool, limit int) {
	// An operation id without Applied: it was tried, and failed (its
	// error says how, and what to do).
	failed := !o.Applied && o.Op != ""
	switch {
	case o.Applied:
		fmt.Fprintf(out, "%s %s", t.Done, t.What)
	case failed:
		fmt.Fprintf(out, "could not %s %s", t.Verb, t.What)
	default:
		fmt.Fprintf(out, "would %s %s", t.Verb, t.What)
	}
	switch {
	case len(o.Plan.Steps) == 0 && len(o.Plan.Conflicts) > 0:
		fmt.Fprintln(out, "\n  nothing can be changed cleanly:")
	case len(o.Plan.Steps) == 0:
		fmt.Fprintln(out, "\n  nothing to change: the files already match")
	default:
		fmt.Fprintf(out, ": %s\n", actionSummary(o.Plan))
	}
	for i, s := range o.Plan.Steps {
		if limit > 0 && i == limit {
			fmt.Fprintf(out, "  … and %d more (--limit 0 lists them all)\n", len(o.Plan.Steps)-limit)
			break
		}
		counts, d := stepChange(s, o.Applied, diff)
		fmt.Fprintln(out, strings.TrimRight(fmt.Sprintf("  %-9s %s  %s", strings.Join(actionNames(s.Actions), "+"), index.Display(s.Path), counts), " "))
		if d != "" {
			fmt.Fprint(out, Indent(ColorDiff(d), "    "))
		}
	}
	for _, u := range o.Plan.CannotRestore {
		fmt.Fprintf(out, "  cannot restore %s: %s\n", index.Display(u.Path), u.Reason)
	}
	printConflicts(out, o.Plan.Conflicts, diff)
	printChecks(out, o.Report, limit)
	switch {
	case failed:
	case o.Applied:
		fmt.Fprintf(out, "done (operation %s); undo it with: ckfs rewind --files --undo\n", o.Op)
	case o.Report.Refused() && o.Report.Forceable():
		printWaysOut(out, o)
	case o.Report.Refused():
		fmt.Fprintf(out, "refused by %s: nothing was changed. Fix what those checks above name, then run it again (they cannot be overridden).\n", failedChecks(o.Report))
	default:
		more := ""
		if !diff && len(o.Plan.Steps) > 0 {
			more = " (-p shows the diffs)"
		}
		fmt.Fprintf(out, "preview only: nothing was changed. %s%s.\n", t.Apply, more)
	}
}

// printConflicts prints a revert's conflicts with their hunks: the first
// three of each file unless all is set.
func printConflicts(out io.Writer, cs []rewind.Conflict, all bool) {
	for _, c := range cs {
		state := "conflict"
		switch {
		case c.Marked:
			state = "marked"
		case c.Skipped:
			state = "left"
		}
		fmt.Fprintf(out, "  %-9s %s  (window %s) %s\n", state, index.Display(c.Path), c.Window, c.Reason)
		for i, h := range c.Hunks {
			if i == 3 && !all {
				fmt.Fprintf(out, "    … and %d more (-p shows them all)\n", len(c.Hunks)-3)
				break
			}
			fmt.Fprint(out, Indent(h.String(), "    "))
		}
	}
}

// actionSummary counts the plan's files by action: "2 restore, 1 delete".
func actionSummary(p *rewind.Plan) string {
	n := map[string]int{}
	for _, s := range p.Steps {
		n[strings.Join(actionNames(s.Actions), "+")]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return english.Count(len(p.Steps), "file", "files") + " (" + strings.Join(parts, ", ") + ")"
}

// stepChange returns a step's "+A -R" (or what it is instead) and, when
// diff is set, its unified diff.
func stepChange(s rewind.Step, applied, diff bool) (string, string) {
	c := s.Change
	switch {
	case applied || c == nil:
		return "", ""
	case c.Unreadable != "":
		return "(" + c.Unreadable + ")", ""
	}
	counts := fmt.Sprintf("+%d -%d", c.Added, c.Removed)
	if c.Binary {
		counts = "binary"
	}
	if !diff {
		return counts, ""
	}
	return counts, c.Diff
}

// printChecks prints the refusals first, then the warnings, each with its
// paths, and the passed checks in one line.
func printChecks(out io.Writer, r *rewind.Report, limit int) {
	var passed []string
	for _, pass := range []int{0, 1} {
		for _, c := range r.Checks {
			failed := !c.OK
			switch {
			case pass == 0 && failed:
				fmt.Fprintf(out, "  FAIL %s: %s\n", c.Name, c.Detail)
			case pass == 1 && !failed && c.Warn:
				fmt.Fprintf(out, "  warn %s: %s\n", c.Name, c.Detail)
			default:
				if pass == 1 && !failed {
					passed = append(passed, c.Name)
				}
				continue
			}
			for i, p := range c.Paths {
				if limit > 0 && i == limit {
					fmt.Fprintf(out, "         … and %d more (--limit 0 lists them all)\n", len(c.Paths)-limit)
					break
				}
				fmt.Fprintf(out, "         %s\n", p)
			}
		}
	}
	if len(passed) == len(r.Checks) {
		fmt.Fprintf(out, "checks: all %d passed\n", len(r.Checks))
	} else if len(passed) > 0 {
		fmt.Fprintf(out, "  ok   %s\n", strings.Join(passed, ", "))
	}
}

func actionNames(as []rewind.Action) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return out
}

// printWaysOut says what helps with a rewind refused over changes ckfs did
// not record or the user's own: a revert of the tool calls since the
// checkpoint (it keeps everything else), the same rewind of the other files
// only, or --force.
func printWaysOut(out io.Writer, o *rewind.Outcome) {
	refused := map[string]bool{}
	for _, c := range o.Report.Checks {
		if !c.OK {
			for _, p := range c.Paths {
				refused[strings.SplitN(p, " (", 2)[0]] = true
			}
		}
	}
	fmt.Fprintf(out, "refused by %s: nothing was changed. Ways out:\n", failedChecks(o.Report))
	since := o.WindowsSince
	switch {
	case len(since) > 0 && len(since) <= 5:
		fmt.Fprintf(out, "  - keep your changes and take out only what the tool calls since then did: ckfs revert %s\n", strings.Join(since, " "))
	case len(since) > 5:
		fmt.Fprintf(out, "  - keep your changes and take out only what the %d tool calls since then did: ckfs revert WINDOW... (ckfs log lists them)\n", len(since))
	}
	var others []string
	for _, s := range o.Plan.Steps {
		if !refused[index.Display(s.Path)] {
			others = append(others, shellQuote(s.Path))
		}
	}
	if len(others) > 0 && len(others) <= 5 {
		fmt.Fprintf(out, "  - rewind only the other files: ckfs rewind --files --to %d -- %s\n", o.Plan.Target, strings.Join(others, " "))
	} else if len(others) > 5 {
		fmt.Fprintf(out, "  - rewind only the other %d files: name them after -- (ckfs rewind --files --to %d -- PATH...)\n", len(others), o.Plan.Target)
	}
	fmt.Fprintln(out, "  - overwrite them anyway: rerun with --force (they are captured first; ckfs rewind --files --undo brings them back)")
}

// shellQuote quotes p for a POSIX shell where it needs it.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,@%") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// failedChecks names the checks that refused, for the last line of a
// refused preview: the FAIL lines above it may have scrolled away.
func failedChecks(r *rewind.Report) string {
	var names []string
	for _, c := range r.Checks {
		if !c.OK {
			names = append(names, fmt.Sprintf("%q (%d %s)", c.Name, len(c.Paths), english.Noun(len(c.Paths), "path", "paths")))
		}
	}
	return strings.Join(names, ", ")
}
