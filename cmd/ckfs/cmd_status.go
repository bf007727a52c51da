package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// statusReport is what ckfs status prints.
type statusReport struct {
	Root       string                `json:"root"`
	Store      string                `json:"store"`
	State      string                `json:"state"` // mounted, not-mounted, dead
	Mountpoint string                `json:"mountpoint,omitempty"`
	Daemon     *workspace.StatusInfo `json:"daemon,omitempty"`
	StoreBytes int64                 `json:"store_bytes"`
	Objects    int                   `json:"objects"`
	Hint       string                `json:"hint,omitempty"`
	// HookProblems counts the lines of the store's hook.log: problems the
	// agent hooks met (a hook never shows them to the agent).
	HookProblems int    `json:"hook_problems,omitempty"`
	HookLast     string `json:"hook_last_problem,omitempty"`
	// Remotes say how far each remote has the timeline (ckfs push).
	Remotes []remoteStatus `json:"remotes,omitempty"`
}

type remoteStatus struct {
	Name     string `json:"name"`
	Unpushed uint64 `json:"unpushed_records"` // seqs after the pushed one
	workspace.RemoteConfig
}

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status [DIR]",
		Short:   "Show whether the workspace is mounted, its open windows and its store",
		Example: "  ckfs status\n  ckfs status --json ~/src/app",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			store, meta, err := findStore(cmd, dir)
			if err != nil {
				return err
			}
			return runStatus(store, meta, asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runStatus(store string, meta *workspace.Meta, asJSON bool, out io.Writer) error {
	r := statusReport{Root: meta.Root, Store: store, State: "not-mounted"}
	r.StoreBytes, r.Objects = workspace.StoreUsage(store)
	if st, err := workspace.ReadDaemonState(store); err == nil {
		r.Mountpoint = st.Mountpoint
		if rep, err := workspace.Call(store, workspace.Request{Op: "status"}); err == nil {
			r.State, r.Daemon = "mounted", rep.Status
		} else {
			r.State = "dead"
			r.Hint = fmt.Sprintf("daemon pid %d is not answering; run: ckfs unmount %s", st.PID, st.Mountpoint)
		}
	} else if workspace.MountedAt(meta.Root) {
		r.State, r.Mountpoint = "dead", meta.Root
		r.Hint = "a ckfs mount without a daemon; run: ckfs unmount " + meta.Root
	}
	r.HookProblems, r.HookLast = hookProblems(store)
	if c, err := workspace.LoadRemotes(store); err == nil && len(c.Remotes) > 0 {
		last, _ := index.LastSeq(workspace.Layout(store).Timeline())
		for _, n := range c.Names() {
			rc := c.Remotes[n]
			r.Remotes = append(r.Remotes, remoteStatus{Name: n, Unpushed: last - min(last, rc.Pushed), RemoteConfig: rc})
		}
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(out, "workspace  %s\nstate      %s\n", r.Root, r.State)
	if r.Mountpoint != "" {
		fmt.Fprintf(out, "mountpoint %s\n", r.Mountpoint)
	}
	if d := r.Daemon; d != nil {
		fmt.Fprintf(out, "daemon     pid %d\nwindows    %d opened, open now: %v\nrecords    %d (%d skipped), %d capture errors\n",
			d.PID, d.Windows, d.OpenWindows, d.Records, d.Skipped, d.Errors)
		if d.StoreFull > 0 || d.StoreFullNow {
			fmt.Fprintf(out, "store full %s\n", d.FullLine())
		}
	}
	fmt.Fprintf(out, "store      %s (%d objects, %d bytes)\n", store, r.Objects, r.StoreBytes)
	for _, rs := range r.Remotes {
		line := fmt.Sprintf("remote     %s %s: ", rs.Name, rs.URL)
		switch {
		case rs.PushedAt.IsZero():
			line += "never pushed"
		case rs.Unpushed == 0:
			line += fmt.Sprintf("up to date (seq %d, %s)", rs.Pushed, rs.PushedAt.Local().Format(time.DateTime))
		default:
			line += fmt.Sprintf("%d records not yet pushed (it has seq %d, %s)", rs.Unpushed, rs.Pushed, rs.PushedAt.Local().Format(time.DateTime))
		}
		if rs.LastError != "" {
			line += fmt.Sprintf("; the last push failed %s: %s (until it succeeds, ckfs gc keeps what it lacks; ckfs remote remove %s stops that)", rs.ErrorAt.Local().Format(time.DateTime), trunc(rs.LastError, 200), rs.Name)
		}
		fmt.Fprintln(out, line)
	}
	if r.HookProblems > 0 {
		fmt.Fprintf(out, "hooks      %d problems in %s; the last: %s\n", r.HookProblems, workspace.Layout(store).HookLog(), r.HookLast)
	}
	if r.Hint != "" {
		fmt.Fprintf(out, "hint       %s\n", r.Hint)
	}
	return nil
}

// hookProblems counts the lines of the store's hook.log and returns the
// last one.
func hookProblems(store string) (int, string) {
	b, err := os.ReadFile(workspace.Layout(store).HookLog())
	if err != nil || len(b) == 0 {
		return 0, ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return len(lines), trunc(lines[len(lines)-1], 300)
}
