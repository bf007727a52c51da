package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"

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
