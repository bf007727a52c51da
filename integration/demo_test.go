package integration

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/internal/testenv"
)

// The README's first command runs ckfs demo: it must pass and leave
// nothing behind.
func TestDemo(t *testing.T) {
	testenv.RequireFUSE(t)
	c := exec.Command(ckfsBin, "demo")
	c.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "demo passed") {
		t.Fatalf("ckfs demo: %v\n%s", err, out)
	}
	for _, want := range []string{"M main.go", "D util/strings.go", "preview only", "rewound the files", "unmounted"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if b, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(b), "ckfs-demo-") {
		t.Error("the demo left its mount behind")
	}
}

// Interrupted, the demo still cleans up: its output piped into a reader
// that stops after the first lines (as `ckfs demo | head`), or Ctrl-C
// while it runs. Nothing stays mounted and its scratch directory goes.
func TestDemoInterrupted(t *testing.T) {
	testenv.RequireFUSE(t)
	for _, how := range []string{"closed output", "interrupt"} {
		tmp := t.TempDir()
		c := exec.Command(ckfsBin, "demo")
		c.Env = append(os.Environ(), "NO_COLOR=1", "TMPDIR="+tmp)
		r, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(r).ReadString('\n')
		if !strings.Contains(line, "scratch repository") {
			t.Fatalf("%s: first line %q", how, line)
		}
		if how == "interrupt" {
			c.Process.Signal(os.Interrupt)
			go io.Copy(io.Discard, r)
		} else {
			r.Close()
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			c.Process.Kill()
			t.Fatalf("%s: the demo did not end", how)
		}
		if b, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(b), tmp) {
			t.Fatalf("%s: the demo left its mount behind", how)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("%s: the demo left %v in its scratch directory", how, left)
		}
	}
}
