package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

// The user's own edits must never be credited to an agent. An agent
// session writes f.txt; the user then changes it where ckfs cannot see
// (while unmounted between sessions, or behind the mount); a second agent
// session appends to it. The second window's before must be what it
// found, a rewind to before it must keep the user's change, and a revert
// of it must agree.
func TestEditsBehindTheMountAreTheUsers(t *testing.T) {
	edits := []struct {
		name  string
		edit  string // run in the repository, where ckfs does not see it
		agent string // the second session's tool call
	}{
		{"append", "echo mine >> f.txt", "echo agent >> f.txt"},
		{"truncate", ": > f.txt", "echo agent >> f.txt"},
		{"sed -i", "sed -i s/s1/mine/ f.txt", "echo agent >> f.txt"},
		// The mount may still cache the name that went behind it: the
		// agent removes it before it writes.
		{"rename", "mv f.txt h.txt", "rm -f f.txt; echo agent > f.txt"},
		{"delete", "rm f.txt", "rm -f f.txt; echo agent > f.txt"},
	}
	for _, how := range []string{"unmounted", "behind the mount"} {
		for _, e := range edits {
			t.Run(how+"/"+e.name, func(t *testing.T) {
				w := mountWorkspace(t, "")
				w.ckfs("run", "--label", "s1", "--", "sh", "-c", "echo s1 > f.txt")
				switch how {
				case "unmounted":
					w.unmount()
					w.shIn(w.root, e.edit)
					w.mount()
				case "behind the mount":
					w.behind(e.edit)
				}
				// What the user left, read from the directory itself (the
				// kernel may still cache the old attributes in the mount).
				mine := readOr(t, filepath.Join(w.behindDir(), "f.txt"))
				w.ckfs("run", "--label", "agent", "--", "sh", "-c", e.agent)
				recs := w.records()
				agent := windowLabelled(t, recs, "agent")
				ch := w.changes(agent)
				if got := ch["f.txt"][0]; got != mine {
					t.Fatalf("the agent's window found f.txt as %q, the disk held %q (the user's change credited to the agent)", got, mine)
				}
				// A revert of the agent's window and a rewind to before it
				// agree: both give back the user's version.
				out := w.ckfs("revert", "--dry-run", agent)
				if !strings.Contains(out, "f.txt") {
					t.Fatalf("revert preview does not name f.txt:\n%s", out)
				}
				// A rewind to before the first session would drop the
				// user's change, later overwritten or not: refused, with
				// ways out that keep it.
				first := windowLabelled(t, recs, "s1")
				out, err := w.ckfsErr("rewind", "--files", "--to", first)
				if code := exitCode(err); code != 3 || !strings.Contains(out, "your own edits") || !strings.Contains(out, "ckfs revert "+first+" "+agent) || strings.Contains(out, "commit") {
					t.Fatalf("rewind to before the first session: exit %d, want 3 (refused over the user's change) with a revert of both windows as a way out\n%s", code, out)
				}
				out = w.ckfs("rewind", "--files", "--last", "1")
				if got := readOr(t, filepath.Join(w.root, "f.txt")); got != mine {
					t.Fatalf("rewind --last 1 left f.txt %q, want the user's %q\n%s", got, mine, out)
				}
				if e.name == "rename" {
					if got := readOr(t, filepath.Join(w.root, "h.txt")); got != "s1\n" {
						t.Fatalf("h.txt after the rewind: %q", got)
					}
				}
				// The log shows the user's change as theirs.
				out = w.ckfs("log")
				if !strings.Contains(out, "f.txt") {
					t.Fatalf("log does not list f.txt:\n%s", out)
				}
			})
		}
	}
}

// behind runs script in the workspace's own directory, beneath its mount,
// as a process that was inside the directory before it was mounted does:
// the daemon never sees the change.
func (w *workspace) behind(script string) {
	w.t.Helper()
	c := exec.Command("sh", "-ec", script)
	c.Dir = w.behindDir()
	c.Env = w.env()
	if out, err := c.CombinedOutput(); err != nil {
		w.t.Fatalf("behind the mount: sh %q: %v\n%s", script, err, out)
	}
}

// behindDir is a path of the workspace's own directory beneath its mount,
// through the handle the harness opened before the first mount.
func (w *workspace) behindDir() string {
	if w.behindFd == nil {
		w.t.Fatal("the workspace was mounted without a handle on its directory")
	}
	return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), w.behindFd.Fd())
}

// windowLabelled returns the id of the window labelled label.
func windowLabelled(t *testing.T, recs []index.Record, label string) string {
	t.Helper()
	for _, win := range index.Windows(recs) {
		if win.Label == label {
			return win.ID
		}
	}
	t.Fatalf("no window labelled %q", label)
	return ""
}

func readOr(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exitCode is the exit status of a command's error (0 for none).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A background command that a call started and that writes after the call
// returned stays that call's (a continuation of its window), never the
// window open when it writes; a writer that is not the call's process is
// not the call's even when its window is the only one open.
func TestBackgroundWritesStayTheirCalls(t *testing.T) {
	w := mountWorkspace(t, "")
	w.ckfs("run", "--label", "A", "--", "sh", "-c", "(sleep 1; echo late > bg.txt) &")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The user's editor, while B runs: not B's.
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(filepath.Join(w.root, "mine.txt"), []byte("mine\n"), 0o644)
	}()
	w.ckfs("run", "--label", "B", "--", "sh", "-c", "sleep 2; echo b > b.txt")
	<-done
	recs := w.records()
	a, b := windowLabelled(t, recs, "A"), windowLabelled(t, recs, "B")
	owner := map[string]string{}
	for _, r := range recs {
		if r.IsImage() && r.Path != "" {
			owner[r.Path] = r.Window
		}
	}
	if owner["bg.txt"] != a || owner["b.txt"] != b || owner["mine.txt"] != "" {
		t.Fatalf("bg.txt credited to %q (want A, %s), b.txt to %q (want B, %s), mine.txt to %q (want the user)", owner["bg.txt"], a, owner["b.txt"], b, owner["mine.txt"])
	}
	out := w.ckfs("log")
	if !strings.Contains(out, "continuation of window "+a) {
		t.Errorf("log does not show A's continuation:\n%s", out)
	}
	out = w.ckfs("revert", b)
	if got := readOr(t, filepath.Join(w.root, "bg.txt")); got != "late\n" {
		t.Fatalf("revert of B took A's background write: bg.txt %q\n%s", got, out)
	}
	if got := readOr(t, filepath.Join(w.root, "mine.txt")); got != "mine\n" {
		t.Fatalf("revert of B took the user's edit: mine.txt %q\n%s", got, out)
	}
	if got := readOr(t, filepath.Join(w.root, "b.txt")); got != "<absent>" {
		t.Fatalf("revert of B left b.txt %q", got)
	}
}

// A Bash call whose command is a megabyte (a heredoc) gets its window,
// and its writes are its own, not the user's.
func TestHugeCommandGetsItsWindow(t *testing.T) {
	w := mountWorkspace(t, "")
	cmd := "cat > big.txt <<'EOF'\n" + strings.Repeat("line of a heredoc\n", 60_000) + "EOF"
	in, _ := json.Marshal(map[string]any{"session_id": "7f3c2a9e-4b1d-4e8a-9c2f-1a2b3c4d5e6f", "cwd": w.root, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_use_id": "toolu_big", "tool_input": map[string]string{"command": cmd}})
	c := exec.Command(ckfsBin, "hook", "claude")
	c.Dir, c.Env, c.Stdin = w.root, w.env(), bytes.NewReader(in)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 1 || st.Daemon.OpenWindows[0] != "toolu_big" {
		t.Fatalf("the call's window did not open: %+v", st.Daemon)
	}
	w.ckfs("window", "close", "--id", "toolu_big")
}

// With several windows opened by hand at once, nothing tells whose a
// write is: a revert of the newest refuses to take out what was credited
// to it on a guess, unless --force.
func TestRevertRefusesGuessedAttribution(t *testing.T) {
	w := mountWorkspace(t, "")
	w.ckfs("window", "open", "--id", "a")
	w.ckfs("window", "open", "--id", "b")
	w.sh("echo one > one.txt; echo two > two.txt")
	w.ckfs("window", "close", "--id", "b")
	w.ckfs("window", "close", "--id", "a")
	out, err := w.ckfsErr("revert", "b")
	if exitCode(err) != 3 || !strings.Contains(out, "guessed attribution") || !strings.Contains(out, "one.txt") {
		t.Fatalf("revert over guessed attribution: exit %d, want 3 naming the guessed paths\n%s", exitCode(err), out)
	}
	if readOr(t, filepath.Join(w.root, "one.txt")) != "one\n" {
		t.Fatal("a refused revert removed one.txt")
	}
	w.ckfs("revert", "--force", "b")
	if readOr(t, filepath.Join(w.root, "one.txt")) != "<absent>" {
		t.Fatal("revert --force kept one.txt")
	}
}

// A preview of a rewind to a mark exits 3 when the rewind would be
// refused, as every other preview does.
func TestMarkPreviewExitsRefused(t *testing.T) {
	w := mountWorkspace(t, "")
	w.ckfs("mark")
	w.ckfs("run", "--", "sh", "-c", "echo agent > f.txt")
	w.sh("echo mine >> f.txt") // the user's own edit
	out, err := w.ckfsErr("rewind", "--mark", "1")
	if exitCode(err) != 3 || !strings.Contains(out, "your own edits") {
		t.Fatalf("preview of a refused rewind to a mark: exit %d, want 3\n%s", exitCode(err), out)
	}
}

// A second mount of a mounted workspace under another CKFS_HOME is refused
// naming the live daemon that serves it, never calling it gone.
func TestSecondMountUnderAnotherHomeNamesTheLiveDaemon(t *testing.T) {
	w := mountWorkspace(t, "")
	c := exec.Command(ckfsBin, "mount", w.root)
	c.Dir = filepath.Dir(w.root)
	c.Env = append(w.env(), "CKFS_HOME="+t.TempDir())
	out, err := c.CombinedOutput()
	if exitCode(err) != 5 || !strings.Contains(string(out), fmt.Sprintf("already mounted by daemon pid %d", w.pid)) || strings.Contains(string(out), "gone") {
		t.Fatalf("a second mount under another CKFS_HOME: exit %d\n%s", exitCode(err), out)
	}
}
