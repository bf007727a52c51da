// Package testhooks holds the hooks the crash and collection tests use to
// reach states that cannot otherwise be timed: every CKFS_TEST_*
// environment variable ckfs reads is here, and none is ever set in normal
// use.
//
//	CKFS_TEST_REWIND_KILL_AT=N    SIGKILL the rewind after operation N (-1: right after its journal is written)
//	CKFS_TEST_REWIND_FAIL_AT=N[:EACCES]   fail operation N with ENOSPC (or EACCES)
//	CKFS_TEST_GC_KILL_AT=N        SIGKILL a collection after its N-th deletion
//	CKFS_TEST_SWEEP_GRACE=DUR     collect objects younger than the usual grace period
//	CKFS_TEST_SIZE_CHECK_EVERY=DUR   how often a daemon with a size limit measures its store (default a minute)
//	CKFS_TEST_REMOTE_GRACE=DUR    the grace period of collections on a shared bucket (default 24 hours)
//	CKFS_TEST_DIE_AFTER=OP:FILE   SIGKILL the daemon once it has carried out an OP request (mkdir, rename, …), before the reply, unless FILE exists (it makes FILE first: only one daemon dies)
//	CKFS_TEST_SLOW_OP=OP:DUR      hold the reply to every OP request back for DUR, once it is carried out
package testhooks

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/rewind"
)

// SweepGrace returns CKFS_TEST_SWEEP_GRACE, if set.
func SweepGrace() (time.Duration, bool) {
	g, err := time.ParseDuration(os.Getenv("CKFS_TEST_SWEEP_GRACE"))
	return g, err == nil
}

// GCKill returns the hook that kills a collection after its N-th
// deletion (CKFS_TEST_GC_KILL_AT), or nil.
func GCKill() func(int) {
	n, err := strconv.Atoi(os.Getenv("CKFS_TEST_GC_KILL_AT"))
	if err != nil {
		return nil
	}
	return func(i int) {
		if i == n {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}

// SizeCheckEvery is how often a daemon with a size limit measures its
// store (CKFS_TEST_SIZE_CHECK_EVERY shortens it).
func SizeCheckEvery() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CKFS_TEST_SIZE_CHECK_EVERY")); err == nil {
		return d
	}
	return time.Minute
}

// RewindFault kills or fails a rewind at a chosen operation
// (CKFS_TEST_REWIND_KILL_AT, CKFS_TEST_REWIND_FAIL_AT), or is nil.
func RewindFault() func(int, rewind.PathAction) error {
	kill, kerr := strconv.Atoi(os.Getenv("CKFS_TEST_REWIND_KILL_AT"))
	failSpec := os.Getenv("CKFS_TEST_REWIND_FAIL_AT")
	failAt, ferr := strconv.Atoi(strings.Split(failSpec, ":")[0])
	if kerr != nil && ferr != nil {
		return nil
	}
	return func(i int, _ rewind.PathAction) error {
		if kerr == nil && i == kill {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		if ferr == nil && i == failAt {
			if strings.HasSuffix(failSpec, ":EACCES") {
				return syscall.EACCES
			}
			return syscall.ENOSPC
		}
		return nil
	}
}

// RemoteGrace returns CKFS_TEST_REMOTE_GRACE, if set: the grace period of
// collections on a shared bucket (tests collect in seconds).
func RemoteGrace() (time.Duration, bool) {
	g, err := time.ParseDuration(os.Getenv("CKFS_TEST_REMOTE_GRACE"))
	return g, err == nil
}

// AfterDirOp returns the hook a daemon calls once it has carried out a
// directory operation, before its reply, or nil: CKFS_TEST_DIE_AFTER
// kills the daemon there (the first time only: its marker file exists
// after), CKFS_TEST_SLOW_OP holds the reply back.
func AfterDirOp() func(op string) {
	die, marker, dieOK := strings.Cut(os.Getenv("CKFS_TEST_DIE_AFTER"), ":")
	slow, d, slowOK := strings.Cut(os.Getenv("CKFS_TEST_SLOW_OP"), ":")
	pause, err := time.ParseDuration(d)
	slowOK = slowOK && err == nil
	if !(dieOK && marker != "") && !slowOK {
		return nil
	}
	return func(op string) {
		if slowOK && op == slow {
			time.Sleep(pause)
		}
		if dieOK && marker != "" && op == die {
			f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return // a daemon died here already
			}
			f.Close()
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
