package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

func newWindowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "window",
		Short: "Open and close tool-call windows by hand",
		Long: `A window groups every write made while it is open, by any process, into one
checkpoint. Agents open and close windows through hooks; these commands do
the same from a shell.`,
	}
	var id, tool, label string
	var asJSON bool
	open := &cobra.Command{
		Use:     "open",
		Short:   "Open a window; writes now belong to it",
		Example: "  ckfs window open --tool Bash --label 'sed -i s/a/b/ main.go'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			if id == "" {
				id = "w-" + uuid.NewString()[:8]
			}
			rep, err := workspace.Call(store, workspace.Request{Op: "open", ID: id, Tool: tool, Label: label})
			if err != nil {
				return err
			}
			return printWindow(cmd.OutOrStdout(), asJSON, "opened", rep)
		},
	}
	open.Flags().StringVar(&id, "id", "", "window id (default: generated)")
	open.Flags().StringVar(&tool, "tool", "", "tool name to record")
	open.Flags().StringVar(&label, "label", "", "free text to record")
	open.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	quiet(open)
	closeCmd := &cobra.Command{
		Use:     "close",
		Short:   "Close a window (the newest if --id is not given)",
		Example: "  ckfs window close\n  ckfs window close --id w-1234",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			rep, err := workspace.Call(store, workspace.Request{Op: "close", ID: id})
			if err != nil {
				return err
			}
			return printWindow(cmd.OutOrStdout(), asJSON, "closed", rep)
		},
	}
	closeCmd.Flags().StringVar(&id, "id", "", "window id")
	closeCmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	quiet(closeCmd)
	cmd.AddCommand(open, closeCmd)
	return cmd
}

func printWindow(out io.Writer, asJSON bool, what string, rep *workspace.Reply) error {
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{"id": rep.ID, "seq": rep.Seq})
	}
	_, err := fmt.Fprintf(out, "%s window %s at checkpoint %d\n", what, rep.ID, rep.Seq)
	return err
}
