package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/provenance"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/fatih/color"
)

// Blame prints ckfs blame: each line with the change it comes from (the
// window, "you", "before ckfs", a rewind), its turn and time, then a key
// to the windows named: tool, turn, prompt and command.
func Blame(out io.Writer, path string, lines []workspace.BlameLine) {
	width := len(fmt.Sprint(len(lines)))
	name := color.New(color.FgYellow).SprintFunc()
	var order []string
	seen := map[string]workspace.BlameLine{}
	for _, l := range lines {
		who := blameWho(l.Origin)
		if _, ok := seen[who]; !ok && (l.Origin.By == provenance.ByWindow || l.Origin.By == provenance.ByRewind) {
			order = append(order, who)
		}
		seen[who] = l
		mark := " "
		if l.Origin.Restored != "" {
			mark = "*" // brought back by a rewind or revert
		}
		turn := ""
		if l.Turn > 0 {
			turn = fmt.Sprintf("turn %d", l.Turn)
		}
		when := "                "
		if !l.Origin.Time.IsZero() && l.Origin.By != provenance.ByBefore {
			when = l.Origin.Time.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(out, "%s%s %-8s %-8s %s %*d) %s\n", name(fmt.Sprintf("%-16s", Trunc(who, 16))), mark, Trunc(l.Tool, 8), turn, when, width, l.N, l.Text)
	}
	restored := false
	for _, l := range lines {
		restored = restored || l.Origin.Restored != ""
	}
	if len(order) > 0 || restored {
		fmt.Fprintln(out)
	}
	for _, who := range order {
		l := seen[who]
		fmt.Fprintf(out, "%s  %s", name(who), l.Tool)
		if l.Turn > 0 {
			fmt.Fprintf(out, "  turn %d %q", l.Turn, Trunc(l.Prompt, 60))
		}
		if l.Label != "" {
			fmt.Fprintf(out, "\n    %s", Trunc(strings.ReplaceAll(l.Label, "\n", " "), 100))
		}
		if l.Origin.Path != "" && l.Origin.Path != path && l.Origin.By == provenance.ByWindow {
			fmt.Fprintf(out, "\n    (written as %s)", index.Display(l.Origin.Path))
		}
		fmt.Fprintln(out)
	}
	if restored {
		fmt.Fprintln(out, "* brought back by a rewind or revert (--json names which)")
	}
}

// blameWho is the short name of a line's origin.
func blameWho(o provenance.Origin) string {
	switch o.By {
	case provenance.ByWindow:
		return o.Window
	case provenance.ByRewind:
		return o.Window
	case provenance.ByYou:
		if o.Seq == 0 {
			return "you (unrecorded)"
		}
		return "you"
	case provenance.ByBefore:
		return "before ckfs"
	}
	return "unknown"
}
