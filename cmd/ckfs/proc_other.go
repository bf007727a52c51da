//go:build !linux

package main

import "golang.org/x/sys/unix"

func openRoot(root string) (int, error) {
	return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

func busyProcesses(string) []string { return nil }

func mountedAt(string) bool { return false }

func servingStore(string) (string, bool) { return "", false }

const sourcePrefix = "ckfs:"

func detach(mnt string) error { return unix.Unmount(mnt, unix.MNT_FORCE) }

func processAlive(pid int) bool { return pid > 0 && unix.Kill(pid, 0) == nil }

func adoptOrphans() {}

func reapChildren() {}
