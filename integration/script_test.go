package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts drives the real ckfs binary as a user would, from the
// scripts in testdata/script: the demo path, the doctor, and the main
// errors with their messages and exit codes. [fuse] marks the scripts
// that mount.
func TestScripts(t *testing.T) {
	if !testenv.HaveFUSE() && os.Getenv("CKFS_REQUIRE_FUSE") == "1" {
		testenv.RequireFUSE(t) // fails: CI must not skip the [fuse] scripts
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(ckfsBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("CKFS_HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("CKFS_CONFIG", filepath.Join(env.WorkDir, "config.toml"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("HOME", env.WorkDir)
			// A script that fails part way leaves its mount: take it down.
			env.Defer(func() { unmountUnder(env.WorkDir, env.Vars) })
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "fuse" {
				return testenv.HaveFUSE(), nil
			}
			return false, nil
		},
	})
}

// unmountUnder unmounts, with ckfs unmount, every mount below dir.
func unmountUnder(dir string, vars []string) {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			c := exec.Command(ckfsBin, "unmount", f[4])
			c.Env = append(os.Environ(), vars...)
			c.Run()
		}
	}
}
