// Command loopback is the baseline for ckfs's passthrough benchmarks: a
// plain go-fuse loopback with go-fuse's default options, mounted until it
// is signalled.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
)

func main() {
	perms := flag.Bool("default-permissions", false, "let the kernel check permissions (default_permissions, modes reported exactly), as ckfs does")
	allowOther := flag.Bool("allow-other", false, "let other users use the mount")
	long := flag.Bool("long-timeouts", false, "hour-long entry and attribute timeouts (as ckfs uses in place)")
	noOpen := flag.Bool("no-open", false, "answer OPEN with ENOSYS (the kernel's no_open: no OPEN or RELEASE for files, page cache kept), with hour-long entry and attribute timeouts: to measure that lever")
	procFD := flag.Bool("proc-fd", false, "serve the directory as /proc/self/fd/N of a descriptor opened before mounting, as ckfs serves its in-place mounts: to measure what that costs")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: loopback [-default-permissions] [-allow-other] DIR MOUNTPOINT")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if *procFD {
		var err error
		if dir, err = procFDPath(dir); err != nil {
			log.Fatal(err)
		}
	}
	root, err := fs.NewLoopbackRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	opts := &fs.Options{MountOptions: fsMountOptions()}
	if *noOpen {
		ln := root.(*fs.LoopbackNode)
		root = &noOpenNode{ln}
		ln.RootData.RootNode = root
	}
	if *noOpen || *long {
		hour := time.Hour
		opts.EntryTimeout, opts.AttrTimeout = &hour, &hour
	}
	opts.MountOptions.AllowOther = *allowOther
	if *perms {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "default_permissions")
		opts.NullPermissions = true
	}
	srv, err := fs.Mount(flag.Arg(1), root, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; srv.Unmount() }()
	srv.Wait()
}
