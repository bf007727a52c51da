// Package testenv holds helpers shared by ckfs's tests: whether FUSE can be
// used here, and the rule that CI must not skip FUSE tests.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// RequireFUSE skips t when FUSE mounts cannot be made on this machine, or
// fails it when CKFS_REQUIRE_FUSE=1 (as in CI), where a missing FUSE is an
// error rather than a reason to skip.
func RequireFUSE(t testing.TB) {
	t.Helper()
	why := missingFUSE()
	if why == "" {
		return
	}
	if os.Getenv("CKFS_REQUIRE_FUSE") == "1" {
		t.Fatalf("FUSE is required (CKFS_REQUIRE_FUSE=1) but %s", why)
	}
	t.Skipf("skipping FUSE test: %s", why)
}

// HaveFUSE reports whether FUSE mounts can be made here. Where it is false
// and CKFS_REQUIRE_FUSE=1, callers must fail rather than skip: see
// RequireFUSE.
func HaveFUSE() bool { return missingFUSE() == "" }

func missingFUSE() string {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "/dev/fuse is missing"
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			return "not root and fusermount3 (package fuse3) is not installed"
		}
	}
	return ""
}
