package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ckfs-dev/ckfs/ui"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

// viewOptions are ckfs view's.
type viewOptions struct {
	Store      string
	Checkpoint string
	Dir        string
	List       bool
	Close      bool
	JSON       bool
}

func newViewCmd() *cobra.Command {
	var o viewOptions
	cmd := &cobra.Command{
		Use:   "view CHECKPOINT [DIR] | --list | --close [DIR]",
		Short: "Mount the whole tree as it was at a checkpoint, read-only, beside the workspace",
		Long: `Mount the workspace's whole tree as it was at CHECKPOINT (a seq from ckfs log,
a window id meaning just before that window, or "now"), read-only, at DIR
(default: a directory in the store, printed). grep, diff -r, build or test
the past next to the present; the workspace is never touched, and nothing
in a view can be written (EROFS).

Every path the timeline recorded is served as it was then, from the store;
every path it never recorded is served as it is now, if it was not
modified since the checkpoint. A path the timeline cannot vouch for is
listed with mode 0 and cannot be read (EIO): it is never guessed. .git/ is
not part of a view.

Views are listed by --list and ckfs status, closed by --close DIR or
--close CHECKPOINT (all of the workspace's without either), and closed
with the workspace by ckfs unmount.`,
		Example: "  ckfs view toolu_01ABC\n  ckfs view 14 /tmp/at-14 && diff -r /tmp/at-14/src src\n  ckfs view --list\n  ckfs view --close /tmp/at-14   # or: ckfs view --close 14",
		Args:    cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Store, err = storeFlag(cmd); err != nil {
				return err
			}
			switch {
			case o.List || o.Close:
				if len(args) > 1 || (o.List && len(args) > 0) {
					return workspace.Errorf(workspace.ErrUsage, "--list takes no argument and --close at most a DIR or a CHECKPOINT")
				}
				if len(args) == 1 {
					o.Dir = args[0]
				}
			case len(args) == 0:
				return workspace.Errorf(workspace.ErrUsage, "give a checkpoint to view (ckfs log lists them), or --list or --close")
			default:
				o.Checkpoint = args[0]
				if len(args) == 2 {
					o.Dir = args[1]
				}
			}
			return runView(o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.List, "list", false, "list the open views")
	cmd.Flags().BoolVar(&o.Close, "close", false, "close the view at DIR (or at a checkpoint), or every view of the workspace")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// viewDir is the directory of the view --close names: a directory, or a
// checkpoint (as ckfs view --list shows them) with one view open at it.
func viewDir(ws *workspace.Workspace, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return arg, nil
	}
	v, err := ws.View()
	if err != nil {
		return "", err
	}
	seq, err := v.Checkpoint(arg)
	if err != nil {
		return arg, nil // not a checkpoint either: CloseView says no view is there
	}
	var dirs []string
	for _, vi := range ws.Views() {
		if vi.Checkpoint == seq {
			dirs = append(dirs, vi.Dir)
		}
	}
	if len(dirs) > 1 {
		return "", workspace.Errorf(workspace.ErrUsage, "%d views are open at checkpoint %d: name the one to close (%s)", len(dirs), seq, strings.Join(dirs, ", "))
	}
	if len(dirs) == 1 {
		return dirs[0], nil
	}
	return arg, nil
}

// runView opens, lists or closes views.
func runView(o viewOptions, stdout io.Writer) error {
	ws, err := workspace.Locate(o.Store, ".")
	if err != nil {
		return err
	}
	switch {
	case o.List:
		views := ws.Views()
		if o.JSON {
			return ui.JSON(stdout, views)
		}
		ui.Views(stdout, views)
		return nil
	case o.Close:
		dir, err := viewDir(ws, o.Dir)
		if err != nil {
			return err
		}
		closed, err := ws.CloseView(dir)
		for _, d := range closed {
			fmt.Fprintf(stdout, "closed the view at %s\n", d)
		}
		if err == nil && len(closed) == 0 {
			fmt.Fprintln(stdout, "no views were open")
		}
		return err
	}
	v, err := ws.View()
	if err != nil {
		return err
	}
	seq, err := v.Checkpoint(o.Checkpoint)
	if err != nil {
		return err
	}
	dir := o.Dir
	if dir == "" {
		dir = filepath.Join(ws.Layout().Views(), fmt.Sprintf("at-%d", seq))
		for i := 2; workspace.MountedAt(dir); i++ {
			dir = filepath.Join(ws.Layout().Views(), fmt.Sprintf("at-%d.%d", seq, i))
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := emptyDir(dir); err != nil {
		return err
	}
	info, err := spawnView(ws.Store, seq, dir)
	if err != nil {
		return err
	}
	if o.JSON {
		return ui.JSON(stdout, info)
	}
	ui.ViewOpened(stdout, info)
	return nil
}

// emptyDir makes dir, or checks that it is an empty directory.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 || workspace.MountedAt(dir) {
		return workspace.Errorf(workspace.ErrUsage, "%s is not an empty directory: give a new or empty one", dir)
	}
	return nil
}

// spawnView starts the process that serves a view, and returns once it
// serves (or says why it could not).
func spawnView(store string, seq uint64, dir string) (*workspace.ViewInfo, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	cmd := exec.Command(exe, "view-serve", "--ready-fd", "3", "--store", store, "--at", fmt.Sprint(seq), "--dir", dir)
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	os.MkdirAll(workspace.Layout(store).Views(), 0o700)
	log, err := os.OpenFile(filepath.Join(workspace.Layout(store).Views(), "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		cmd.Stdout, cmd.Stderr = log, log
		defer log.Close()
	}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("start the view: %w", err)
	}
	pw.Close()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	if msg, failed := strings.CutPrefix(strings.TrimSpace(line), "error "); failed || line == "" {
		cmd.Wait()
		if msg == "" {
			msg = "the view's process exited without serving"
		}
		return nil, fmt.Errorf("view checkpoint %d at %s: %s", seq, dir, msg)
	}
	pid := cmd.Process.Pid
	cmd.Process.Release()
	ws, err := workspace.Open(store)
	if err != nil {
		return nil, err
	}
	for _, v := range ws.Views() {
		if v.PID == pid {
			return &v, nil
		}
	}
	return nil, fmt.Errorf("the view at %s is not recorded", dir)
}
