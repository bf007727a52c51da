package main

import (
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newMarkCmd() *cobra.Command {
	var label string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "mark",
		Short: "Bookmark this moment on both timelines (agent hooks do it at every prompt)",
		Long: `Write a mark: the file timeline's checkpoint now and, if an agent session
is registered (by its hooks), where its conversation stands, paired. ckfs
rewind --mark N uses each side on its own: --files restores the files,
--conversation forks the conversation, both do both, neither previews.`,
		Example: `  ckfs mark --label "before the refactor"
  ckfs rewind --mark 3 --files --conversation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, _, err := findStore(cmd, ".")
			if err != nil {
				return err
			}
			m, err := workspace.HandMark(store, label, time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), m)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mark %d: files at checkpoint %d", m.Mark, m.Files)
			if c := m.Conversation; c != nil {
				fmt.Fprintf(cmd.OutOrStdout(), ", conversation %s at event %d", c.Session, c.Seq)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&label, "label", "", "what the mark is for")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the mark as JSON")
	return cmd
}
