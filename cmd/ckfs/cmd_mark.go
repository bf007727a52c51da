package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/transcript"
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
			m, err := handMark(store, label, time.Now())
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

// handMark writes a mark by hand: the conversation side is the latest
// session's last clean position.
func handMark(store, label string, now time.Time) (*session.Mark, error) {
	files, err := workspace.FileCheckpoint(store, workspace.DaemonAlive(store))
	if err != nil {
		return nil, err
	}
	m := &session.Mark{Label: label, Files: files}
	ids, err := session.List(store)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		id := ids[len(ids)-1]
		evs, _, err := session.Load(session.Path(store, id))
		if err != nil {
			return nil, err
		}
		c := &session.Coord{Session: id}
		for i := len(evs) - 1; i >= 0; i-- {
			if session.Clean(evs, evs[i].Seq) {
				c.Seq = evs[i].Seq
				break
			}
		}
		for _, e := range evs {
			if e.Agent != "" {
				c.Agent = e.Agent
			}
			if e.Transcript != "" {
				c.Transcript = e.Transcript
			}
		}
		if c.Transcript != "" && c.Agent != "" {
			if t, err := transcript.Load(c.Transcript, c.Agent); err == nil {
				for n := len(t.Lines); n >= 0; n-- {
					if t.Clean(n) {
						c.Lines, c.Prefix = int64(n), t.PrefixHash(n)
						break
					}
				}
			} else {
				c.Transcript = ""
			}
		} else {
			c.Transcript = ""
		}
		m.Conversation = c
	}
	if _, err := session.AppendMark(store, m, now); err != nil {
		return nil, err
	}
	return m, nil
}

// findMark returns mark n of a store.
func findMark(store, n string) (*session.Mark, error) {
	marks, tail, err := session.LoadMarks(store)
	if err != nil {
		return nil, err
	}
	if tail != nil && !tail.Torn {
		return nil, fmt.Errorf("%v: run ckfs verify", tail)
	}
	want, err := strconv.Atoi(n)
	if err != nil {
		return nil, withCode(ExitUsage, "--mark %q: give a mark number from ckfs log", n)
	}
	for i := range marks {
		if marks[i].Mark == want {
			return &marks[i], nil
		}
	}
	return nil, withCode(ExitUsage, "no mark %d (the store has %d marks): ckfs log lists them", want, len(marks))
}
