package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// codexRun is the real codex CLI against the Responses stand-in, with a
// private CODEX_HOME and HOME.
type codexRun struct {
	w    *workspace
	bin  string
	api  *responsesStandIn
	home string // CODEX_HOME
}

func newCodexRun(t *testing.T, w *workspace) *codexRun {
	return &codexRun{w: w, bin: agentBinary(t, codexPackage, codexVersion, "codex"), api: newResponsesStandIn(t), home: t.TempDir()}
}

// agent runs `ckfs agent codex -c <provider> exec ARGS` in the workspace.
func (c *codexRun) agent(args ...string) string {
	c.w.t.Helper()
	full := append([]string{"agent", "codex",
		"-c", `model_provider="standin"`, "-c", `model="standin-model"`,
		"-c", `model_providers.standin={name="standin", base_url="` + c.api.srv.URL + `/v1", wire_api="responses", env_key="STANDIN_KEY"}`,
		"exec", "--skip-git-repo-check", "-s", "danger-full-access"}, args...)
	cmd := exec.Command(ckfsBin, full...)
	cmd.Dir = c.w.root
	cmd.Env = append(c.w.env(), "CKFS_CODEX="+c.bin, "CODEX_HOME="+c.home, "HOME="+filepath.Dir(c.home), "STANDIN_KEY=sk-standin")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &out, strings.NewReader("")
	if err := cmd.Start(); err != nil {
		c.w.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.w.t.Fatalf("ckfs agent codex %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		c.w.t.Fatalf("ckfs agent codex: still running after 3 minutes\n%s", out.String())
	}
	return out.String()
}

func (c *codexRun) rollouts() []string {
	m, _ := filepath.Glob(filepath.Join(c.home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	return m
}

// The real Codex CLI, through ckfs agent codex (hooks passed for the run
// only, so nothing is written into ~/.codex): two turns of exec_command
// calls captured as windows under marks; then both sides rewound to the
// second mark, and the real CLI resuming the fork, which sends exactly the
// first turn and reports its own session id.
func TestRealCodexSession(t *testing.T) {
	w := mountWorkspace(t, `printf 'total = 1\n' > calc.py`)
	c := newCodexRun(t, w)
	prompts := []string{"Turn one: change 1 to 2 in calc.py", "Turn two: write notes"}
	trees := map[int]string{1: workTree(t, w.root)}

	c.api.queue(
		responsesReply{text: "Editing.", calls: []responsesCall{{"call_01Sed", "exec_command", `{"cmd":"sed -i 's/1/2/' calc.py"}`}}},
		responsesReply{text: "Turn one done."},
	)
	c.agent(prompts[0])
	rs := c.rollouts()
	if len(rs) != 1 {
		t.Fatalf("rollouts after turn one: %v", rs)
	}
	id := strings.TrimSuffix(filepath.Base(rs[0]), ".jsonl")
	id = id[len(id)-36:]
	trees[2] = workTree(t, w.root)

	c.api.queue(
		responsesReply{text: "Writing.", calls: []responsesCall{{"call_02Notes", "exec_command", `{"cmd":"printf 'notes\\n' > NOTES.md"}`}}},
		responsesReply{text: "Turn two done."},
	)
	c.agent("resume", id, prompts[1])
	final := workTree(t, w.root)
	if !strings.Contains(final, "NOTES.md") || !strings.Contains(final, `"total = 2\n"`) {
		t.Fatalf("workspace after two turns:\n%s", final)
	}
	log := w.ckfs("log")
	for _, want := range []string{"mark 2", "window call_01Sed", "window call_02Notes"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open: %+v", st.Daemon)
	}

	out := w.ckfs("rewind", "--mark", "2", "--files", "--conversation", "--json")
	if got := workTree(t, w.root); got != trees[2] {
		t.Errorf("files at mark 2:\n%s\nwant\n%s", got, trees[2])
	}
	var r rewindJSON
	json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &r)
	if r.Conversation == nil || !r.Conversation.Written {
		t.Fatalf("no conversation fork at mark 2:\n%s", out)
	}
	child := r.Conversation.Child
	before := len(c.api.allRequests())
	c.api.queue(responsesReply{text: "Resumed."})
	res := c.agent("resume", child, "resumed at mark 2")
	if !strings.Contains(res, child) {
		t.Errorf("the resumed fork does not report its own session id %s:\n%s", child, res)
	}
	reqs := c.api.allRequests()
	if len(reqs) <= before {
		t.Fatal("the resumed fork sent nothing")
	}
	sent, _ := json.Marshal(reqs[before]["input"])
	if !strings.Contains(string(sent), prompts[0]) || strings.Contains(string(sent), prompts[1]) {
		t.Errorf("the resumed fork sent the wrong turns: %s", sent)
	}
	// CKFS_KEEP_TRANSCRIPT=FILE keeps the rollout the real CLI wrote for
	// turns one and two (the parser tests' fixture comes from here).
	if keep := os.Getenv("CKFS_KEEP_TRANSCRIPT"); keep != "" {
		b, _ := os.ReadFile(rs[0])
		os.WriteFile(keep, b, 0o644)
	}
}
