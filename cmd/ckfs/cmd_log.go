package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// logOptions are ckfs log's.
type logOptions struct {
	Store string // --store, or "" to find it from the directory
	JSON  bool
	All   bool // also windows in which nothing was written
}

func newLogCmd() *cobra.Command {
	var o logOptions
	var rr remoteRead
	cmd := &cobra.Command{
		Use:   "log",
		Short: "List checkpoints, newest first, with the files each window changed",
		Long: `List the timeline newest first: every tool window with its checkpoints, tool,
label and time, and the files it changed with added and removed lines;
changes made outside any window (your own edits) and rewinds are listed as
such. Windows are grouped under the turns that marks delimit (the agent
hooks write a mark at every prompt). Rewind with ckfs rewind --to
CHECKPOINT (a seq shown here), --to ID (just before that window) or
--mark M (both timelines). Windows in which nothing was written (an
agent's Read, Grep or Glob calls) are left out unless --all.`,
		Example: "  ckfs log\n  ckfs log --json | jq '.[0]'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Store, err = rr.store(cmd); err != nil {
				return err
			}
			return runLog(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.All, "all", false, "also list windows in which nothing was written")
	rr.add(cmd)
	return cmd
}

func printLog(out io.Writer, entries []workspace.LogEntry, records []index.Record) {
	if len(entries) == 0 {
		fmt.Fprintln(out, "no checkpoints yet: writes inside windows (ckfs window open, ckfs run, agent hooks) appear here")
		return
	}
	w, wrec := index.Watermark(records)
	mark := map[string]string{"added": "A", "deleted": "D", "modified": "M", "mode": "m", "type": "T", "skipped": "!"}
	below := false
	for _, e := range entries {
		pre := ""
		if e.Mark > 0 && e.Kind != "mark" {
			pre = "  " // inside a turn
		}
		if !e.Restorable && !below {
			below = true
			fmt.Fprintf(out, "--- checkpoints before %d are no longer restorable: ckfs gc removed their content on %s (%s) ---\n",
				w, wrec.Time.Local().Format("2006-01-02 15:04"), wrec.Reason)
		}
		when := e.Time.Local().Format("2006-01-02 15:04:05")
		switch e.Kind {
		case "mark":
			fmt.Fprintf(out, "mark %d  %s  checkpoint %d", e.Mark, when, e.Checkpoint)
			if e.Session != "" {
				fmt.Fprintf(out, "  conversation %s", e.Session)
			}
			if e.Label != "" {
				fmt.Fprintf(out, "\n    %q", trunc(e.Label, 100))
			}
			fmt.Fprintln(out)
			continue
		case "window":
			fmt.Fprint(out, pre)
			state := fmt.Sprintf("checkpoints %d..%d", e.Before, e.Checkpoint)
			if e.Open {
				state = fmt.Sprintf("from checkpoint %d, still open", e.Before)
			}
			if e.Interrupted {
				state += " (interrupted: the daemon stopped inside it; its changes were recorded at the next mount)"
			}
			switch {
			case len(e.Alongside) > 0 && e.Guessed > 0:
				state += fmt.Sprintf(" (alongside %s: %d %s could not be matched to a call by the writing process and %s credited to this, the newest window)", strings.Join(e.Alongside, ", "), e.Guessed, plural(e.Guessed, "path", "paths"), plural(e.Guessed, "is", "are"))
			case len(e.Alongside) > 0:
				state += fmt.Sprintf(" (alongside %s)", strings.Join(e.Alongside, ", "))
			}
			if e.Unfinished {
				state += " (unfinished: the agent never reported this call done; closed at the end of its turn)"
			}
			fmt.Fprintf(out, "window %s  %s  %s  %s", e.ID, e.Tool, when, state)
			if e.Label != "" {
				fmt.Fprintf(out, "\n    %q", trunc(e.Label, 100))
			}
			fmt.Fprintln(out)
		case "rewind":
			fmt.Fprintf(out, pre+"rewind %s  to checkpoint %d  %s  (checkpoint %d is just before it)\n", e.ID, e.Target, when, e.Before)
		case "outside":
			fmt.Fprintf(out, pre+"outside any window (your own edits)  %s  checkpoints %d..%d\n", when, e.Before, e.Checkpoint)
		}
		for _, f := range e.Files {
			detail := ""
			switch {
			case f.Status == "skipped":
				detail = "not stored: " + f.Reason
			case f.Collected:
				detail = "content collected"
			case f.Problem == "damaged":
				detail = "content damaged in the store: run ckfs verify --repair"
			case f.Problem == "missing":
				detail = "content missing from the store: run ckfs verify"
			case f.Binary:
				detail = "binary"
			case f.Dir:
				detail = "directory"
			case f.Status == "added" || f.Status == "deleted" || f.Status == "modified" || f.Status == "type":
				detail = fmt.Sprintf("+%d -%d", f.Added, f.Removed)
			}
			fmt.Fprintf(out, "%s    %s %s  %s\n", pre, mark[f.Status], index.Display(f.Path), detail)
		}
	}
}

func trunc(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// runLog lists the timeline, newest first.
func runLog(ctx context.Context, o logOptions, stdout io.Writer) error {
	v, err := openView(func() (string, *workspace.Meta, error) { return workspace.Find(o.Store, ".") })
	if err != nil {
		return err
	}
	entries := v.LogEntries()
	if !o.All {
		entries = slices.DeleteFunc(entries, func(e workspace.LogEntry) bool { return e.Kind == "window" && !e.Wrote })
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	printLog(stdout, entries, v.Records)
	return nil
}
