package main

import "github.com/hanwen/go-fuse/v2/fuse"

func fsMountOptions() fuse.MountOptions {
	return fuse.MountOptions{FsName: "loopback", Name: "loopback", DirectMount: true}
}
