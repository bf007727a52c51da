package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testhooks"
	"github.com/ckfs-dev/ckfs/rewind"
	"golang.org/x/sys/unix"
)

// RewindEnv assembles what rewind.Run needs. gitDir is how git reaches the
// workspace (never through the mount from the daemon); extra is the
// descriptor git must inherit for it, or nil.
//
// recs is the timeline if the caller has it (it must be current: read
// under the store's lock); nil reads it.
func RewindEnv(store string, storeRoot, workRoot string, cs cas.Store, rootFd int, appendFn func(...*index.Record) error, openWindows []string, recs []index.Record) (rewind.Env, error) {
	if recs == nil {
		var tail *index.LineError
		var err error
		recs, tail, err = index.Load(Layout(store).Timeline())
		if err != nil {
			return rewind.Env{}, err
		}
		if tail != nil && !tail.Torn {
			return rewind.Env{}, BadTimeline(store, tail)
		}
	}
	pending, err := rewind.PendingJournals(Layout(store).Journals())
	if err != nil {
		return rewind.Env{}, err
	}
	return rewind.Env{
		Records: recs,
		Applier: &rewind.Applier{
			Store: cs, Dir: rewind.NewDir(rootFd), JournalDir: Layout(store).Journals(), Root: workRoot,
			Append: appendFn, AfterAction: testhooks.RewindFault(),
		},
		Check: rewind.CheckInput{
			StoreRoot: storeRoot, WorkRoot: workRoot, Pending: pending, OpenWindows: openWindows,
			Git: gitStatus(workRoot, rootFd), GitSince: gitSince(rootFd),
		},
	}, nil
}

// gitStatus returns the git check for a workspace, or nil outside git. Git
// runs on the backing directory through an inherited descriptor, so the
// daemon never reaches into its own mount.
func gitStatus(root string, rootFd int) func([]string) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(rootFd, ".git", &st, 0); err != nil {
		return nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	return func(paths []string) ([]string, error) {
		// A duplicate: the *os.File closes its descriptor when collected.
		dup, err := unix.Dup(rootFd)
		if err != nil {
			return nil, err
		}
		dir := os.NewFile(uintptr(dup), root)
		defer dir.Close()
		args := []string{"--no-optional-locks", "-C", "/proc/self/fd/3", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--"}
		c := exec.Command("git", append(args, paths...)...)
		c.ExtraFiles = []*os.File{dir}
		c.Env = append(os.Environ(), "GIT_DIR=/proc/self/fd/3/.git", "GIT_WORK_TREE=/proc/self/fd/3")
		out, err := c.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
			}
			return nil, err
		}
		return porcelainPaths(out), nil
	}
}

// gitFiles are git's own files that move with a commit, checkout, reset
// or git add, and what a change of each means.
var gitFiles = []struct{ path, what string }{
	{".git/logs/HEAD", "HEAD moved (a commit, checkout or reset)"},
	{".git/HEAD", "another branch is checked out"},
	{".git/index", "git rewrote its index (git add, a commit or checkout, or only a git status refreshing it)"},
	{".git/packed-refs", "refs were packed or deleted"},
	{".git/refs/heads", "a branch moved, was made or was deleted"},
}

// gitSince returns the check for git's own files changed after a time, or
// nil outside git (or where .git is a file: a worktree's git directory is
// elsewhere).
func gitSince(rootFd int) func(time.Time) []string {
	var st unix.Stat_t
	if err := unix.Fstatat(rootFd, ".git", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil
	}
	return func(since time.Time) []string {
		var moved []string
		for _, f := range gitFiles {
			var st unix.Stat_t
			if err := unix.Fstatat(rootFd, f.path, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue
			}
			if time.Unix(st.Mtim.Unix()).After(since) {
				moved = append(moved, f.path+": "+f.what)
			}
		}
		return moved
	}
}

// porcelainPaths reads the paths of git status --porcelain=v1 -z: each
// entry is "XY PATH"; a rename or copy is followed by its source path as
// an entry of its own, without a status (it is listed as "NEW (from OLD)").
func porcelainPaths(out []byte) []string {
	var paths []string
	entries := strings.Split(string(out), "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 || e[2] != ' ' {
			continue
		}
		p := e[3:]
		if (e[0] == 'R' || e[0] == 'C') && i+1 < len(entries) {
			i++
			p += " (from " + entries[i] + ")"
		}
		paths = append(paths, p)
	}
	return paths
}
