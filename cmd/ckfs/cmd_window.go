package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

// windowOptions are ckfs window open's and close's.
type windowOptions struct {
	Store       string // --store, or "" to find it from the current directory
	Op          string // open or close
	ID          string // open: "" for a generated id; close: "" for the newest window
	Tool, Label string // open: what to record
	JSON        bool
}

func newWindowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "window",
		Short: "Open and close tool-call windows by hand",
		Long: `A window groups every write made while it is open, by any process, into one
checkpoint. Agents open and close windows through hooks; these commands do
the same from a shell. A window is not opened from a shell that was in the
repository when ckfs mounted over it: that shell still sees the directory
under the mount, and its writes would bypass ckfs (cd there again first).`,
	}
	var o windowOptions
	fill := func(cmd *cobra.Command, op string) (err error) {
		o.Op = op
		o.Store, err = storeFlag(cmd)
		return err
	}
	open := &cobra.Command{
		Use:     "open",
		Short:   "Open a window; writes now belong to it",
		Example: "  ckfs window open --tool Bash --label 'sed -i s/a/b/ main.go'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fill(cmd, workspace.OpOpen); err != nil {
				return err
			}
			return runWindow(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	open.Flags().StringVar(&o.ID, "id", "", "window id (default: generated)")
	open.Flags().StringVar(&o.Tool, "tool", "", "tool name to record")
	open.Flags().StringVar(&o.Label, "label", "", "free text to record")
	open.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	quiet(open)
	closeCmd := &cobra.Command{
		Use:     "close [ID]",
		Short:   "Close a window (the newest if no id is given)",
		Long:    "Close the window ID (given as an argument or with --id), or the newest open window.\nckfs status lists the open windows.",
		Example: "  ckfs window close\n  ckfs window close w-1234\n  ckfs window close --id w-1234",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fill(cmd, workspace.OpClose); err != nil {
				return err
			}
			if len(args) == 1 {
				if o.ID != "" && o.ID != args[0] {
					return workspace.Errorf(workspace.ErrUsage, "two window ids: %s (--id) and %s; give one", o.ID, args[0])
				}
				o.ID = args[0]
			}
			return runWindow(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	closeCmd.Flags().StringVar(&o.ID, "id", "", "window id")
	closeCmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	quiet(closeCmd)
	cmd.AddCommand(open, closeCmd)
	return cmd
}

// runWindow opens or closes a window by hand and prints it.
func runWindow(ctx context.Context, o windowOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	d := ws.Daemon()
	var rep *workspace.Reply
	what := "closed"
	if o.Op == workspace.OpOpen {
		if err := ws.RefuseHiddenCwd(); err != nil {
			return err
		}
		id := o.ID
		if id == "" {
			id = "w-" + uuid.NewString()[:8]
		}
		what = "opened"
		rep, err = d.OpenWindow(workspace.Window{ID: id, Tool: o.Tool, Label: o.Label})
	} else {
		rep, err = d.CloseWindow(o.ID, "")
	}
	if err != nil {
		return err
	}
	return printWindow(stdout, o.JSON, what, rep)
}

func printWindow(out io.Writer, asJSON bool, what string, rep *workspace.Reply) error {
	if asJSON {
		return json.NewEncoder(out).Encode(struct {
			ID  string `json:"id"`
			Seq uint64 `json:"seq"`
		}{rep.ID, rep.Seq})
	}
	_, err := fmt.Fprintf(out, "%s window %s at checkpoint %d\n", what, rep.ID, rep.Seq)
	return err
}
