package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/doctor"
	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [DIR]",
		Short: "Check everything a mount needs and explain how to fix what is missing",
		Long: `Check /dev/fuse, the permission to mount (root, or fusermount3 from the
fuse3 package), kernel FUSE passthrough, the configuration file, the store
directory and its permissions, and the workspace DIR (default: the current
directory): a mount whose daemon is gone, a dead daemon, an unfinished
rewind. Each problem comes with the command that fixes it. Exit code 1
when a check fails.`,
		Example: "  ckfs doctor\n  ckfs doctor ~/src/app --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			flag, _ := storeFlag(cmd)
			ds := doctor.Diagnose(dir, flag)
			failed := 0
			for _, d := range ds {
				if d.Status == "fail" {
					failed++
				}
			}
			if asJSON {
				printJSON(cmd.OutOrStdout(), ds)
			} else {
				printDiagnoses(cmd.OutOrStdout(), ds)
			}
			if failed > 0 {
				return &exitError{code: ExitError, err: fmt.Errorf("%d checks failed", failed), silent: asJSON}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printDiagnoses(out io.Writer, ds []doctor.Diagnosis) {
	for _, d := range ds {
		fmt.Fprintf(out, "%-5s %s: %s\n", strings.ToUpper(d.Status), d.Check, d.Detail)
		if d.Fix != "" {
			fmt.Fprintf(out, "      fix: %s\n", d.Fix)
		}
	}
}
