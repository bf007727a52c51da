package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func (w *workspace) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(w.root, rel))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// exitCode runs ckfs in the workspace and returns its output and exit code.
func (w *workspace) exitCode(env []string, args ...string) (string, int) {
	return w.exitCodeIn(w.root, env, args...)
}

func (w *workspace) exitCodeIn(dir string, env []string, args ...string) (string, int) {
	c := exec.Command(ckfsBin, args...)
	c.Dir = dir
	c.Env = append(w.env(), env...)
	out, err := c.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return string(out), 0
}

const rewindSetup = `printf 'one\ntwo\n' > a.txt && mkdir src && printf 'package src\n' > src/s.go`

func (w *workspace) twoWindows() {
	w.window("w1", `sed -i 's/two/TWO/' a.txt && printf 'new\n' > src/new.go && mkdir -p gen/out && printf 'g\n' > gen/out/g.txt`)
	w.window("w2", `rm src/s.go && printf 'three\n' >> a.txt && ln -s a.txt link && chmod 600 a.txt`)
}

// Mounted: the rewind goes through the daemon and the mount shows the
// restored bytes at once; --undo reverses it; the preview changes nothing.
func TestRewindMounted(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	before, exact := w.shape(), w.exactly()
	out := w.ckfs("rewind", "--to", "w1")
	if !strings.Contains(out, "preview only") || strings.Contains(out, "-TWO") || !regexp.MustCompile(`restore +a\.txt +\+1 -2`).MatchString(out) {
		t.Errorf("preview (short: counts, no diffs):\n%s", out)
	}
	if out := w.ckfs("rewind", "--to", "w1", "-p"); !strings.Contains(out, "-TWO") || !strings.Contains(out, "+two") {
		t.Errorf("preview -p (with diffs):\n%s", out)
	}
	if got := w.exactly(); got != exact {
		t.Fatalf("the preview changed the workspace")
	}
	w.ckfs("rewind", "--files", "--to", "w1")
	if got := w.read("a.txt"); got != "one\ntwo\n" {
		t.Errorf("a.txt through the mount after rewind = %q", got)
	}
	for _, gone := range []string{"src/new.go", "gen", "link"} {
		if _, err := os.Lstat(filepath.Join(w.root, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still exists after the rewind: %v", gone, err)
		}
	}
	if w.read("src/s.go") != "package src\n" {
		t.Errorf("deleted file not recreated")
	}
	w.ckfs("rewind", "--files", "--undo")
	if got := w.shape(); got != before {
		t.Fatalf("after undo:\n%s\nwant\n%s", got, before)
	}
	// Rewind the last window only.
	w.ckfs("rewind", "--files", "--last", "1")
	if got := w.read("a.txt"); got != "one\nTWO\n" {
		t.Errorf("after --last 1: a.txt = %q", got)
	}
	log := w.ckfs("log")
	for _, want := range []string{"window w2", "window w1", "rewind r-", "M a.txt", "D src/s.go"} {
		if !strings.Contains(log, want) {
			t.Errorf("ckfs log lacks %q:\n%s", want, log)
		}
	}
	if got := w.ckfs("show", "w1:a.txt"); got != "one\ntwo\n" {
		t.Errorf("show w1:a.txt = %q", got)
	}
}

// A refused rewind has its own exit code and leaves every file as it was.
func TestRewindRefusedExitCode(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	w.sh(`printf 'my own words\n' > a.txt`)
	snap := w.exactly()
	out, code := w.exitCode(nil, "rewind", "--files", "--to", "w1")
	if code != 3 || !strings.Contains(out, "your own edits") || !strings.Contains(out, "--force") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if got := w.exactly(); got != snap {
		t.Fatal("a refused rewind changed the workspace")
	}
	w.ckfs("rewind", "--files", "--force", "--to", "w1")
	w.ckfs("rewind", "--files", "--undo", "--force")
	if w.read("a.txt") != "my own words\n" {
		t.Errorf("undo of a forced rewind did not bring the user's edit back: %q", w.read("a.txt"))
	}
}

// Unmounted: the rewind runs on the plain directory.
func TestRewindUnmounted(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	w.unmount()
	w.ckfs("rewind", "--files", "--to", "w1")
	if w.read("a.txt") != "one\ntwo\n" || w.read("src/s.go") != "package src\n" {
		t.Errorf("unmounted rewind: a.txt %q src/s.go %q", w.read("a.txt"), w.read("src/s.go"))
	}
}

// kill -9 of the rewind at every step of the apply (right after the
// journal, then after each operation): the next rewind is refused until
// --rollback, which restores the exact pre-rewind tree.
func TestRewindKilledAtEveryStep(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	w.unmount()
	snapshot := w.shape
	before := snapshot()
	journal := filepath.Join(w.store, "journal")
	for k := -1; ; k++ {
		out, code := w.exitCode([]string{fmt.Sprintf("CKFS_TEST_REWIND_KILL_AT=%d", k)}, "rewind", "--files", "--to", "w1")
		if code == 0 {
			if k < 2 {
				t.Fatalf("the rewind finished before step %d: the kill hook did nothing\n%s", k, out)
			}
			t.Logf("killed at each of %d steps", k+1)
			break
		}
		if code != -1 && code != 137 {
			t.Fatalf("step %d: exit %d, want a kill\n%s", k, code, out)
		}
		ents, _ := os.ReadDir(journal)
		if len(ents) != 1 {
			t.Fatalf("step %d: %d journals after the kill", k, len(ents))
		}
		op := strings.TrimSuffix(ents[0].Name(), ".json")
		if out, code := w.exitCode(nil, "rewind", "--files", "--to", "w2"); code != 3 || !strings.Contains(out, "--rollback") {
			t.Fatalf("step %d: a rewind with a pending journal: exit %d\n%s", k, code, out)
		}
		w.ckfs("rewind", "--rollback", op)
		if got := snapshot(); got != before {
			t.Fatalf("step %d: after rollback\n%s\nwant\n%s", k, got, before)
		}
	}
	// The last run completed; undo returns to the original tree too.
	w.ckfs("rewind", "--files", "--undo")
	if got := snapshot(); got != before {
		t.Fatalf("after undo\n%s\nwant\n%s", got, before)
	}
}

// An injected failure (ENOSPC, EACCES) part way is rolled back at once:
// the files are as they were, no journal is left, and the message says so.
func TestRewindInjectedFailure(t *testing.T) {
	for _, fault := range []string{"1:ENOSPC", "0:EACCES"} {
		t.Run(fault, func(t *testing.T) {
			w := mountWorkspace(t, rewindSetup)
			w.twoWindows()
			w.unmount()
			before := w.shape()
			out, code := w.exitCode([]string{"CKFS_TEST_REWIND_FAIL_AT=" + fault}, "rewind", "--files", "--to", "w1")
			if code != 1 || !strings.Contains(out, "the files are as they were before it") || strings.Contains(out, "preview only") {
				t.Fatalf("exit %d (a failed rewind, put back, and worded as a failure, not a preview):\n%s", code, out)
			}
			if got := w.shape(); got != before {
				t.Fatalf("after the failed rewind\n%s\nwant\n%s", got, before)
			}
			if ents, _ := os.ReadDir(filepath.Join(w.store, "journal")); len(ents) != 0 {
				t.Fatalf("%d journals left after a rewind put back", len(ents))
			}
		})
	}
}

// kill -9 of the daemon in the middle of a mounted rewind: the dead mount
// is cleaned up, and --rollback on the plain directory restores the tree.
func TestRewindDaemonKilledMidway(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	w.unmount()
	before := w.shape()
	c := exec.Command(ckfsBin, "mount", w.root)
	c.Dir = "/"
	c.Env = append(w.env(), "CKFS_TEST_REWIND_KILL_AT=2")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("mount: %v\n%s", err, out)
	}
	w.refreshPids()
	if _, code := w.exitCode(nil, "rewind", "--files", "--to", "w1"); code == 0 {
		t.Fatal("the rewind succeeded although the daemon was killed")
	}
	for i := 0; i < 100 && alive(w.pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	w.ckfs("unmount", w.root)
	ents, _ := os.ReadDir(filepath.Join(w.store, "journal"))
	if len(ents) != 1 {
		t.Fatalf("%d journals after the daemon was killed mid-rewind", len(ents))
	}
	w.ckfs("rewind", "--rollback", strings.TrimSuffix(ents[0].Name(), ".json"))
	if got := w.shape(); got != before {
		t.Fatalf("after rollback\n%s\nwant\n%s", got, before)
	}
}

// Mounted in place, the kernel caches directory listings and file pages
// across opens; a rewind, which writes behind the mount, must drop them:
// a listing taken before and after shows exactly what is on disk.
func TestRewindShowsInListings(t *testing.T) {
	w := mountWorkspace(t, `mkdir d && printf 'a\n' > d/a.txt`)
	ls := func() string { return w.sh("ls d; cat d/*") }
	if got := ls(); got != "a.txt\na\n" {
		t.Fatalf("listing before: %q", got)
	}
	w.window("w1", "rm d/a.txt && printf 'b\\n' > d/b.txt")
	if got := ls(); got != "b.txt\nb\n" {
		t.Fatalf("listing in the window: %q", got)
	}
	w.ckfs("rewind", "--files", "--to", "w1")
	if got := ls(); got != "a.txt\na\n" {
		t.Fatalf("listing after the rewind: %q (a cached listing or page survived it)", got)
	}
	w.ckfs("rewind", "--files", "--undo")
	if got := ls(); got != "b.txt\nb\n" {
		t.Fatalf("listing after the undo: %q", got)
	}
}

// shape is the workspace as a rewind, its rollback or its undo restores it:
// every entry's type, mode, owner, size and link target, and the files'
// bytes, but not times (a restored entry is written now, as git checkout
// writes it, so a build sees it as changed).
func (w *workspace) shape() string {
	return w.shIn(w.root, "find . -exec ls -ld --time-style=+ {} + | sort; cat a.txt src/*")
}

// exactly is the workspace with every entry's time to the nanosecond: what
// a preview, a refused rewind or an abandoned journal must leave untouched.
func (w *workspace) exactly() string {
	return w.shIn(w.root, "find . -exec ls -ld --time-style=full-iso {} + | sort; cat a.txt src/*")
}
