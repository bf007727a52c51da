package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/pastfs"
	"github.com/ckfs-dev/ckfs/provenance"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/spf13/cobra"
)

func newViewServeCmd() *cobra.Command {
	var readyFd int
	var store, dir string
	var at uint64
	cmd := &cobra.Command{
		Use:    "view-serve --store DIR --at SEQ --dir DIR",
		Short:  "Serve a read-only view (started by ckfs view)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ready, done := readyWriter(readyFd)
			defer done()
			err := serveView(store, at, dir, ready)
			if err != nil {
				fmt.Fprintf(ready, "error %v\n", err)
			}
			return err
		},
	}
	cmd.Flags().IntVar(&readyFd, "ready-fd", 0, "file descriptor to report readiness on")
	cmd.Flags().StringVar(&store, "store", "", "the workspace's store")
	cmd.Flags().Uint64Var(&at, "at", 0, "the checkpoint")
	cmd.Flags().StringVar(&dir, "dir", "", "the mountpoint")
	return cmd
}

// serveView mounts the tree at checkpoint at on dir and serves it until
// it is unmounted or the process is told to stop.
func serveView(store string, at uint64, dir string, ready io.Writer) error {
	ws, err := workspace.Open(store)
	if err != nil {
		return err
	}
	v, err := ws.View()
	if err != nil {
		return err
	}
	tree, err := v.TreeAt(at)
	if err != nil {
		return err
	}
	info := workspace.ViewInfo{PID: os.Getpid(), Dir: dir, Checkpoint: at, Started: time.Now(), Paths: len(tree)}
	for _, e := range tree {
		if e.From == provenance.Unavailable {
			info.Unavailable = append(info.Unavailable, e.Path)
		}
	}
	srv, err := pastfs.Mount(dir, tree, &workspace.TreeSource{View: v}, pastfs.Options{Name: fmt.Sprintf("ckfs-view:%d", at), Debug: os.Getenv("CKFS_VIEW_DEBUG") != ""})
	if err != nil {
		return err
	}
	if err := ws.AddView(info); err != nil {
		srv.Unmount()
		return err
	}
	defer ws.RemoveView(info.PID)
	if err := os.Chdir("/"); err != nil {
		srv.Unmount()
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		<-stop
		for srv.Unmount() != nil {
			time.Sleep(100 * time.Millisecond) // busy: a process is inside
		}
	}()
	fmt.Fprintln(ready, "ok")
	srv.Wait()
	return nil
}
