package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
)

// A second mount of the same workspace is refused with exit code 5, and a
// store that serves another root refuses to be used for this one.
func TestMountRefusals(t *testing.T) {
	w := mountWorkspace(t, `echo x > a.txt`)
	out, code := w.exitCodeIn("/", nil, "mount", w.root)
	if code != 5 || !strings.Contains(out, "already mounted") {
		t.Fatalf("second mount: exit %d\n%s", code, out)
	}
	other := filepath.Join(filepath.Dir(w.root), "other")
	os.Mkdir(other, 0o755)
	out, code = w.exitCodeIn("/", nil, "mount", "--store", w.store, other)
	if code == 0 || !strings.Contains(out, "serves "+w.root) {
		t.Fatalf("mount of another root with this store: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(b), " "+other+" ") {
		exec.Command("umount", "-l", other).Run()
		t.Fatal("the other root was mounted")
	}
	// The store must not live inside the workspace it serves.
	inside := filepath.Join(filepath.Dir(w.root), "third")
	os.Mkdir(inside, 0o755)
	out, code = w.exitCodeIn("/", nil, "mount", "--store", filepath.Join(inside, ".ckfs"), inside)
	if code == 0 || !strings.Contains(out, "inside the workspace") {
		t.Fatalf("store inside the workspace: exit %d\n%s", code, out)
	}
}

// An unmount from inside the busy workspace names what keeps it busy.
func TestUnmountBusy(t *testing.T) {
	w := mountWorkspace(t, "")
	sleeper := exec.Command("sleep", "30")
	sleeper.Dir = w.root
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	out, code := w.exitCodeIn("/", nil, "unmount", w.root)
	sleeper.Process.Kill()
	sleeper.Wait()
	if code != 5 || !strings.Contains(out, "sleep") {
		t.Fatalf("unmount of a busy workspace: exit %d\n%s", code, out)
	}
	// One line says what holds it, not fusermount's message broken
	// over lines.
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.Contains(first, "still in use by: pid") || strings.Contains(out, "fusermount") {
		t.Errorf("unmount of a busy workspace does not say in one line what holds it:\n%s", out)
	}
}

// In a git repository the rewind consults git status for the paths it
// touches and reports uncommitted changes.
func TestRewindConsultsGit(t *testing.T) {
	w := mountWorkspace(t, `git init -q . && printf 'v1\n' > a.txt && git add a.txt && git commit -qm one`)
	w.window("w1", `printf 'v2\n' > a.txt`)
	out := w.ckfs("rewind", "--to", "w1")
	if !strings.Contains(out, "git shows uncommitted changes") || !strings.Contains(out, "a.txt") {
		t.Fatalf("preview in a git repository:\n%s", out)
	}
}

// ckfs never captures .git: when git's own files moved since the
// checkpoint (a window committed), the preview says so, naming what moved,
// and says nothing of the kind when they did not.
func TestRewindSaysGitMoved(t *testing.T) {
	w := mountWorkspace(t, `git init -q . && printf 'v1\n' > a.txt && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -qm one`)
	w.window("w1", `printf 'v2\n' > a.txt`)
	if out := w.ckfs("rewind", "--to", "w1"); strings.Contains(out, "git history") {
		t.Fatalf("git did not move, yet the preview says it did:\n%s", out)
	}
	w.window("w2", `printf 'v3\n' > a.txt && git -c user.name=t -c user.email=t@example.com commit -qam two`)
	out := w.ckfs("rewind", "--to", "w1")
	for _, want := range []string{"git history", ".git/logs/HEAD", "does not rewind .git", ".git/index"} {
		if !strings.Contains(out, want) {
			t.Errorf("the preview after a window committed lacks %q:\n%s", want, out)
		}
	}
}

// --abandon forgets the journal of a rewind killed part way and leaves
// the files alone.
func TestRewindAbandon(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	w.unmount()
	_, code := w.exitCode([]string{"CKFS_TEST_REWIND_KILL_AT=1"}, "rewind", "--files", "--to", "w1")
	if code != -1 && code != 137 {
		t.Fatalf("a rewind killed part way: exit %d", code)
	}
	ents, _ := os.ReadDir(filepath.Join(w.store, "journal"))
	if len(ents) != 1 {
		t.Fatalf("%d journals", len(ents))
	}
	partial := w.exactly()
	w.ckfs("rewind", "--abandon", strings.TrimSuffix(ents[0].Name(), ".json"))
	if got := w.exactly(); got != partial {
		t.Fatal("--abandon changed the workspace")
	}
	if ents, _ := os.ReadDir(filepath.Join(w.store, "journal")); len(ents) != 0 {
		t.Fatal("journal left after --abandon")
	}
}

// Only one rewind at a time: while another process holds the store's lock
// (a rewind in progress on the unmounted workspace), a rewind is refused.
func TestRewindWhileLocked(t *testing.T) {
	w := mountWorkspace(t, rewindSetup)
	w.twoWindows()
	w.unmount()
	lock, _, err := index.OpenWriter(w.store, index.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap := w.exactly()
	out, code := w.exitCode(nil, "rewind", "--files", "--to", "w1")
	lock.Close()
	if code != 5 || !strings.Contains(out, "locked") {
		t.Fatalf("rewind while locked: exit %d\n%s", code, out)
	}
	if w.exactly() != snap {
		t.Fatal("the refused rewind changed the workspace")
	}
}

// A file held open for reading while another process rewrites it through
// the mount: the write succeeds and every later read sees it (read-only
// and writable handles share one coherent view; a kernel page cache kept
// for a reader must never go stale behind a passthrough writer).
func TestReaderAndWriterStayCoherent(t *testing.T) {
	w := mountWorkspace(t, `printf 'old\n' > f`)
	out := w.sh(`exec 7<f; cat f; printf 'new\n' > f; cat f; cat <&7; exec 7<&-; cat f; sed -i s/new/newer/ f; cat f`)
	if out != "old\nnew\nnew\nnew\nnewer\n" {
		t.Fatalf("reads around a write with a reader open: %q", out)
	}
}

// Both ways of serving files capture the same changes, and ckfs doctor
// says which one a mount uses: the cached model by default, passthrough
// when the configuration (or mount --io) asks for it.
func TestBothIOModelsCaptureAlike(t *testing.T) {
	script := `printf 'two\n' >> a.txt && sed -i 's/one/ONE/' a.txt && printf 'new\n' > n.txt && rm gone.txt && mv b.txt c.txt`
	want := map[string][2]string{
		"a.txt": {"one\n", "ONE\ntwo\n"}, "n.txt": {"<absent>", "new\n"}, "gone.txt": {"bye\n", "<absent>"},
		"b.txt": {"b\n", "<absent>"}, "c.txt": {"<absent>", "b\n"},
	}
	for _, c := range []struct{ name, config, doctor, death string }{
		{"cached", "", "file I/O: cached", "daemon death: if the daemon dies, a successor takes the mount over"},
		{"passthrough", "[capture]\nio = \"passthrough\"\n", "file I/O: passthrough", "daemon death: if the daemon dies, the mount goes with it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorkspace(t, `printf 'one\n' > a.txt && printf 'b\n' > b.txt && printf 'bye\n' > gone.txt`)
			if err := os.WriteFile(w.config, []byte(c.config), 0o644); err != nil {
				t.Fatal(err)
			}
			w.mount()
			w.window("w1", script)
			if got := w.changes("w1"); !equalChanges(got, want) {
				t.Errorf("window changed\n%s\nwant\n%s", fmtChanges(got), fmtChanges(want))
			}
			if daemonState(t, w).Supervisor == 0 {
				c.death = "the mount goes with it" // a kernel before 6.9
			}
			if out := w.ckfs("doctor"); !strings.Contains(out, c.doctor) || !strings.Contains(out, c.death) {
				t.Errorf("doctor does not say %q and %q:\n%s", c.doctor, c.death, out)
			}
		})
	}
}
