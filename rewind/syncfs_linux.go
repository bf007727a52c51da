package rewind

import "golang.org/x/sys/unix"

func syncfs(fd int) error { return unix.Syncfs(fd) }
