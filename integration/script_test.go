package integration

import (
	"os"
	"path/filepath"
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
