//go:build !linux

package workspace

import "golang.org/x/sys/unix"

func OpenRoot(root string) (int, error) {
	return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

func BusyProcesses(string) []string { return nil }

func MountedAt(string) bool { return false }

func ServingStore(string) (string, bool) { return "", false }

const SourcePrefix = "ckfs:"

func Detach(mnt string) error { return unix.Unmount(mnt, unix.MNT_FORCE) }

func ProcessAlive(pid int) bool { return pid > 0 && unix.Kill(pid, 0) == nil }

func AdoptOrphans() {}

func ReapChildren() {}
