package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/workspace"
)

// Log prints a timeline's entries (workspace.View.LogEntries), newest
// first, with a line where restorability ends.
func Log(out io.Writer, entries []workspace.LogEntry, records []index.Record) {
	LogStyled(out, entries, records, LogStyle{})
}

// LogStyle is how ckfs log prints: one line an entry, or each entry with
// at most Files of its files (0: all).
type LogStyle struct {
	Oneline bool
	Stat    bool // each entry's files as git's --stat, with the totals
	Files   int
}

// LogStyled prints the log as style says.
func LogStyled(out io.Writer, entries []workspace.LogEntry, records []index.Record, style LogStyle) {
	if len(entries) == 0 {
		fmt.Fprintln(out, "no checkpoints yet: writes inside windows (ckfs window open, ckfs run, agent hooks) appear here")
		return
	}
	w, wrec := index.Watermark(records)
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
		if style.Oneline {
			fmt.Fprintln(out, pre+oneline(e, when))
			continue
		}
		switch e.Kind {
		case "mark":
			fmt.Fprintf(out, "mark %d  %s  checkpoint %d", e.Mark, when, e.Checkpoint)
			if e.Session != "" {
				fmt.Fprintf(out, "  conversation %s", e.Session)
			}
			if e.Label != "" {
				fmt.Fprintf(out, "\n    %q", Trunc(e.Label, 100))
			}
			fmt.Fprintln(out)
			continue
		case "window":
			fmt.Fprintf(out, "%swindow %s  %s  %s  %s", pre, e.ID, e.Tool, when, windowState(e))
			if e.Label != "" {
				fmt.Fprintf(out, "\n    %q", Trunc(e.Label, 100))
			}
			fmt.Fprintln(out)
		case "rewind":
			fmt.Fprintf(out, pre+"rewind %s  %s  %s  (checkpoint %d is just before it)\n", e.ID, rewindLabel(e), when, e.Before)
		case "outside":
			fmt.Fprintf(out, pre+"outside any window (your own edits)  %s  checkpoints %d..%d\n", when, e.Before, e.Checkpoint)
		case "continuation":
			fmt.Fprintf(out, pre+"continuation of window %s (a process it started wrote after it returned)  %s  checkpoints %d..%d\n", e.ID, when, e.Before, e.Checkpoint)
		}
		if style.Stat && len(e.Files) > 0 {
			logStat(out, pre, e, style.Files)
		} else {
			logFiles(out, pre, e, style.Files)
		}
	}
}

// windowState says where a window stands and what is special about it.
func windowState(e workspace.LogEntry) string {
	state := fmt.Sprintf("checkpoints %d..%d", e.Before, e.Checkpoint)
	if e.Open {
		state = fmt.Sprintf("from checkpoint %d, still open", e.Before)
	}
	if e.Interrupted {
		state += " (interrupted: the daemon stopped inside it; what it wrote until then was recorded when a daemon started again)"
	}
	switch {
	case len(e.Alongside) > 0 && e.Guessed > 0:
		state += fmt.Sprintf(" (alongside %s: %d %s could not be matched to a call by the writing process and %s credited to this, the newest window)", strings.Join(e.Alongside, ", "), e.Guessed, english.Noun(e.Guessed, "path", "paths"), english.Noun(e.Guessed, "is", "are"))
	case len(e.Alongside) > 0:
		state += fmt.Sprintf(" (alongside %s)", strings.Join(e.Alongside, ", "))
	}
	if e.Unfinished {
		state += " (unfinished: the agent never reported this call done; closed at the end of its turn, or once the agent exited)"
	}
	if e.Failed {
		state += " (failed)"
	}
	return state
}

// notStored is why a content was not stored, for a line that says "not
// stored" itself: the store-full reason says it too.
func notStored(reason string) string {
	return strings.TrimPrefix(reason, "not stored: ")
}

// fileDetail is what a log line says of a file's change.
func fileDetail(f workspace.LogFile) string {
	detail := ""
	switch {
	case f.Status == "skipped":
		detail = "not stored: " + notStored(f.Reason)
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
	return detail
}

// logStat lists an entry's files as git's --stat does, at most limit of
// them (0: all), then its totals.
func logStat(out io.Writer, pre string, e workspace.LogEntry, limit int) {
	var rows []statRow
	for _, f := range e.Files {
		row := statRow{path: index.Display(f.Path), added: f.Added, removed: f.Removed}
		if d := fileDetail(f); !strings.HasPrefix(d, "+") {
			row.note = statusCodes[f.Status] + " " + d
		}
		rows = append(rows, row)
	}
	writeStat(out, pre+"   ", rows, limit, moreFilesHint(e))
}

// moreFilesHint says how to see the files of an entry that the log left
// out.
func moreFilesHint(e workspace.LogEntry) string {
	if e.Kind == "window" {
		return fmt.Sprintf("ckfs diff %s --stat lists them", e.ID)
	}
	return "ckfs log --files 0 lists them"
}

// logFiles lists an entry's files, at most limit of them (0: all), with
// how many more there are and how to see them.
func logFiles(out io.Writer, pre string, e workspace.LogEntry, limit int) {
	for i, f := range e.Files {
		if limit > 0 && i == limit {
			more := len(e.Files) - limit
			fmt.Fprintf(out, "%s    … and %s (%s)\n", pre, english.Count(more, "more file", "more files"), moreFilesHint(e))
			return
		}
		fmt.Fprintf(out, "%s    %s %s  %s\n", pre, statusCodes[f.Status], index.Display(f.Path), fileDetail(f))
	}
}

// oneline is an entry in one line: what, when, its checkpoints, how many
// files with their added and removed lines, and its label or prompt.
func oneline(e workspace.LogEntry, when string) string {
	added, removed := 0, 0
	for _, f := range e.Files {
		added, removed = added+f.Added, removed+f.Removed
	}
	files := fmt.Sprintf("%d %s +%d -%d", len(e.Files), english.Noun(len(e.Files), "file", "files"), added, removed)
	var line string
	switch e.Kind {
	case "mark":
		line = fmt.Sprintf("mark %d  %s  checkpoint %d", e.Mark, when, e.Checkpoint)
		if e.Label != "" {
			line += fmt.Sprintf("  %q", Trunc(e.Label, 80))
		}
		return line
	case "window":
		line = fmt.Sprintf("%s  %s  %s  %d..%d  %s", e.ID, e.Tool, when, e.Before, e.Checkpoint, files)
		if e.Open {
			line += "  (open)"
		}
		if e.Failed {
			line += "  (failed)"
		}
	case "rewind":
		return fmt.Sprintf("rewind %s  %s  %s  %s", e.ID, when, rewindLabel(e), files)
	case "outside":
		line = fmt.Sprintf("yours  %s  %d..%d  %s", when, e.Before, e.Checkpoint, files)
	case "continuation":
		line = fmt.Sprintf("%s (continued)  %s  %d..%d  %s", e.ID, when, e.Before, e.Checkpoint, files)
	}
	if e.Label != "" {
		line += fmt.Sprintf("  %q", Trunc(e.Label, 80))
	}
	return line
}

// rewindLabel is what a rewind entry was ("revert of …", "undo of …",
// "rewind to checkpoint N").
func rewindLabel(e workspace.LogEntry) string {
	if e.Label != "" {
		return e.Label
	}
	return fmt.Sprintf("rewind to checkpoint %d", e.Target)
}
