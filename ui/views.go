package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/workspace"
)

// Views lists the open views of checkpoints.
func Views(out io.Writer, views []workspace.ViewInfo) {
	if len(views) == 0 {
		fmt.Fprintln(out, "no views are open (ckfs view CHECKPOINT opens one)")
		return
	}
	for _, v := range views {
		fmt.Fprintf(out, "checkpoint %-6d %s  (pid %d, since %s)\n", v.Checkpoint, v.Dir, v.PID, v.Started.Local().Format("2006-01-02 15:04"))
	}
}

// ViewOpened says where a new view is and what it cannot show.
func ViewOpened(out io.Writer, v *workspace.ViewInfo) {
	fmt.Fprintf(out, "checkpoint %d is at %s, read-only (%d %s); close it with: ckfs view --close %s\n", v.Checkpoint, v.Dir, v.Paths, english.Noun(v.Paths, "path", "paths"), v.Dir)
	if n := len(v.Unavailable); n > 0 {
		shown := v.Unavailable[:min(n, 5)]
		for i, p := range shown {
			shown[i] = index.Display(p)
		}
		more := ""
		if n > len(shown) {
			more = fmt.Sprintf(" and %d more (--json lists them)", n-len(shown))
		}
		fmt.Fprintf(out, "%d %s the timeline cannot vouch for there are listed but cannot be read: %s%s\n", n, english.Noun(n, "path", "paths"), strings.Join(shown, ", "), more)
	}
}
