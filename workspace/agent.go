package workspace

import (
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/ckfs-dev/ckfs/transcript"
)

// agentBinaries are the agents' executables, and the variable that
// overrides each.
var agentBinaries = map[string][2]string{
	transcript.Claude: {"claude", "CKFS_CLAUDE"},
	transcript.Codex:  {"codex", "CKFS_CODEX"},
}

// RunAgent runs the agent (claude or codex) on the repository in the
// current directory with ckfs's hooks (AgentArgs), mounting it with the
// ckfs binary exe first when it is not mounted, and unmounting it again
// afterwards. The agent gets this process's stdin; an *exec.ExitError is
// the agent's own exit status.
func RunAgent(exe, agent string, args []string, stdout, stderr io.Writer) error {
	root, err := AbsDir(".")
	if err != nil {
		return err
	}
	bin := os.Getenv(agentBinaries[agent][1])
	if bin == "" {
		bin = agentBinaries[agent][0]
	}
	if _, err := exec.LookPath(bin); err != nil {
		pkg := map[string]string{transcript.Claude: "@anthropic-ai/claude-code", transcript.Codex: "@openai/codex"}[agent]
		return fmt.Errorf("%s is not installed or not on PATH (npm install -g %s), or set %s", bin, pkg, agentBinaries[agent][1])
	}
	store, _, err := Find("", root)
	mountedHere := false
	if err != nil || !DaemonAlive(store) {
		mount := exec.Command(exe, "mount", root)
		mount.Stdout, mount.Stderr = stderr, stderr
		if err := mount.Run(); err != nil {
			return fmt.Errorf("mount %s before starting %s: %w", root, agent, err)
		}
		mountedHere = true
		if store, _, err = Find("", root); err != nil {
			return err
		}
	}
	pre, err := AgentArgs(store, exe, agent)
	if err != nil {
		return err
	}
	c := exec.Command(bin, append(pre, args...)...)
	c.Dir = root // entered after the mount: the agent sees the mounted view
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	c.Env = append(os.Environ(), "CKFS_STORE="+store)
	runErr := c.Run()
	if mountedHere {
		um := exec.Command(exe, "unmount", root)
		um.Dir = "/"
		if out, err := um.CombinedOutput(); err != nil {
			fmt.Fprintf(stderr, "ckfs: %s stays mounted: %s", root, out)
		}
	}
	return runErr
}
