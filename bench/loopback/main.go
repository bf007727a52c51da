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

	"github.com/hanwen/go-fuse/v2/fs"
)

func main() {
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: loopback DIR MOUNTPOINT")
		os.Exit(2)
	}
	root, err := fs.NewLoopbackRoot(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := fs.Mount(flag.Arg(1), root, &fs.Options{MountOptions: fsMountOptions()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; srv.Unmount() }()
	srv.Wait()
}
