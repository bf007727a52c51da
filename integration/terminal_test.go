package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// term is a real terminal: a private tmux server running one command.
type term struct {
	t      *testing.T
	socket string
}

// newTerm starts script in a 100x20 tmux window; the server is killed
// when the test ends.
func newTerm(t *testing.T, w *workspace, script string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CKFS_REQUIRE_FUSE") == "1" {
			t.Fatal("tmux is not installed (scripts/test installs it)")
		}
		t.Skip("tmux is not installed")
	}
	// The server's socket lives in the test's own directory, so it goes
	// with it even when the server leaves it behind.
	tm := &term{t: t, socket: filepath.Join(t.TempDir(), "tmux-ckfs-test")}
	// less keeps no history in the user's home (~/.lesshst) for a test.
	env := append(w.env(), "PATH="+filepath.Dir(ckfsBin)+":"+os.Getenv("PATH"), "TERM=xterm", "LESSHISTFILE=-")
	var exports strings.Builder
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&exports, "export %s=%q; ", k, v)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	cmd := exec.Command("tmux", "-S", tm.socket, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "20",
		exports.String()+"cd "+fmt.Sprintf("%q", w.root)+" && "+script+"; echo EXIT=$?; sleep 60")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	return tm
}

func (tm *term) screen() string {
	out, _ := exec.Command("tmux", "-S", tm.socket, "capture-pane", "-p").Output()
	return string(out)
}

// waitFor waits until the screen shows want.
func (tm *term) waitFor(want string) string {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := tm.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed %q:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-S", tm.socket, "send-keys"}, keys...)...).CombinedOutput(); err != nil {
		tm.t.Fatalf("send-keys: %v\n%s", err, out)
	}
}

// ckfs rewind -i in a real terminal: the turns and calls newest first
// with their files, a call's menu, and a revert chosen there that keeps
// the later call's change; Escape leaves without changing anything.
func TestRewindPickerInATerminal(t *testing.T) {
	w := mountWorkspace(t, `printf '1\n2\n3\n' > a.txt`)
	w.window("w1", "sed -i s/1/ONE/ a.txt")
	w.window("w2", "sed -i s/3/THREE/ a.txt && echo n > n.txt")

	tm := newTerm(t, w, "ckfs rewind -i")
	s := tm.waitFor("choose a turn or a tool call")
	if i, j := strings.Index(s, "call w2"), strings.Index(s, "call w1"); i < 0 || j < i || !strings.Contains(s, "M a.txt, A n.txt") {
		t.Fatalf("the list is not newest first with files:\n%s", s)
	}
	tm.keys("Down", "Enter")
	tm.waitFor("Revert only this call, keeping everything after it")
	// A preview is shown in the pager (it stays open though it fits),
	// and q returns to the same menu.
	tm.keys("Down", "Down", "Enter")
	s = tm.waitFor("q returns to the menu")
	if !strings.Contains(s, "preview only") || strings.Contains(s, "EXIT=") {
		t.Fatalf("the preview is not paged:\n%s", s)
	}
	tm.keys("q")
	s = tm.waitFor("Revert only this call, keeping everything after it")
	if !strings.Contains(s, "ckfs rewind: call w1") {
		t.Fatalf("q did not return to w1's menu:\n%s", s)
	}
	// A rewind the checks refuse (the user's own edit would go) shows
	// why, then the menu again; nothing is changed.
	w.sh(`printf 'ONE\n2\nTHREE\nmine\n' > a.txt`)
	tm.keys("Up", "Up", "Enter")
	s = tm.waitFor("refused: ")
	if !strings.Contains(s, "your own edits") {
		t.Fatalf("the refusal does not say why:\n%s", s)
	}
	tm.keys("q")
	tm.waitFor("Revert only this call, keeping everything after it")
	if got := w.read("a.txt"); got != "ONE\n2\nTHREE\nmine\n" {
		t.Fatalf("a refused rewind changed a.txt: %q", got)
	}
	w.sh(`printf 'ONE\n2\nTHREE\n' > a.txt`)
	tm.keys("Down", "Enter")
	s = tm.waitFor("EXIT=")
	if !strings.Contains(s, "reverted window w1") || !strings.Contains(s, "EXIT=0") {
		t.Fatalf("after choosing revert:\n%s", s)
	}
	if got := w.read("a.txt"); got != "1\n2\nTHREE\n" {
		t.Fatalf("a.txt = %q, want w1 reverted and w2 kept", got)
	}

	tm2 := newTerm(t, w, "ckfs rewind -i")
	tm2.waitFor("choose a turn or a tool call")
	tm2.keys("Escape")
	if s := tm2.waitFor("EXIT="); !strings.Contains(s, "nothing was changed") || !strings.Contains(s, "EXIT=0") {
		t.Fatalf("escape:\n%s", s)
	}
	if got := w.read("a.txt"); got != "1\n2\nTHREE\n" {
		t.Fatalf("escape changed a.txt: %q", got)
	}
}

// On a terminal, long output goes through the pager (less -FRX by
// default, as git does), and q leaves it; CKFS_PAGER=cat turns it off.
func TestPagerOnATerminal(t *testing.T) {
	w := mountWorkspace(t, "")
	w.window("many", `for i in $(seq 1 60); do echo $i > f$i.txt; done`)
	tm := newTerm(t, w, "ckfs log")
	s := tm.waitFor("A f2")
	if strings.Contains(s, "EXIT=") || !strings.HasSuffix(strings.TrimRight(s, "\n "), ":") {
		t.Fatalf("ckfs log did not stop in the pager:\n%s", s)
	}
	tm.keys("q")
	tm.waitFor("EXIT=0")

	tm2 := newTerm(t, w, "CKFS_PAGER=cat ckfs log")
	tm2.waitFor("EXIT=0")
}
