package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// procFDPath opens dir and returns the /proc path of the descriptor.
func procFDPath(dir string) (string, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/proc/self/fd/%d", fd), nil
}
