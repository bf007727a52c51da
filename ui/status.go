package ui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/workspace"
)

// Status prints a workspace's state, one item per line.
func Status(out io.Writer, r *workspace.StatusReport) {
	fmt.Fprintf(out, "workspace  %s\nstate      %s\n", r.Root, r.State)
	if r.Mountpoint != "" {
		fmt.Fprintf(out, "mountpoint %s\n", r.Mountpoint)
	}
	if d := r.Daemon; d != nil {
		// The counts are this daemon's, not the timeline's (ckfs log
		// shows that): say so, or a remount reads as lost history.
		open := "none"
		if len(d.OpenWindows) > 0 {
			open = strings.Join(d.OpenWindows, ", ")
		}
		fmt.Fprintf(out, "daemon     pid %d\nwindows    open now: %s; %d opened since this daemon started\nrecords    %d since this daemon started (%d skipped), %d capture errors\n",
			d.PID, open, d.Windows, d.Records, d.Skipped, d.Errors)
		if d.Batched > 0 {
			fmt.Fprintf(out, "batched    %s, taken ahead of their file's change\n", english.Count(int(d.Batched), "pre-image", "pre-images"))
		}
		if d.StoreFull > 0 || d.StoreFullNow {
			fmt.Fprintf(out, "store full %s\n", d.FullLine())
		}
	}
	fmt.Fprintf(out, "store      %s (%s; %s on disk", r.Store, english.Count(r.Objects, "object", "objects"), english.Size(r.StoreBytes))
	if r.ReserveBytes > 0 {
		fmt.Fprintf(out, ", %s of it held free for a full disk", english.Size(r.ReserveBytes))
	}
	fmt.Fprintln(out, ")")
	for _, v := range r.Views {
		fmt.Fprintf(out, "view       checkpoint %d at %s (read-only; ckfs view --close %s)\n", v.Checkpoint, v.Dir, v.Dir)
	}
	for _, rs := range r.Remotes {
		line := fmt.Sprintf("remote     %s %s: ", rs.Name, rs.URL)
		switch {
		case rs.PushedAt.IsZero():
			line += "never pushed"
		case rs.Unpushed == 0:
			line += fmt.Sprintf("up to date (seq %d, %s)", rs.Pushed, rs.PushedAt.Local().Format(time.DateTime))
		default:
			line += fmt.Sprintf("%s not yet pushed (it has seq %d, %s)", english.Count(int(rs.Unpushed), "record", "records"), rs.Pushed, rs.PushedAt.Local().Format(time.DateTime))
		}
		if rs.LastError != "" {
			line += fmt.Sprintf("; the last push failed %s: %s (until it succeeds, ckfs gc keeps what it lacks; ckfs remote remove %s stops that)", rs.ErrorAt.Local().Format(time.DateTime), Trunc(rs.LastError, 200), rs.Name)
		}
		fmt.Fprintln(out, line)
	}
	if r.HookProblems > 0 {
		fmt.Fprintf(out, "hooks      %d problems in %s; the last: %s\n", r.HookProblems, workspace.Layout(r.Store).HookLog(), r.HookLast)
	}
	if r.Hint != "" {
		fmt.Fprintf(out, "hint       %s\n", r.Hint)
	}
}
