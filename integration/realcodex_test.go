package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
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

// patchCall is an exec_command call whose command is an apply_patch
// heredoc, which Codex intercepts and applies in its own process.
func patchCall(id, patch string) responsesCall {
	b, _ := json.Marshal(map[string]string{"cmd": "apply_patch <<'EOF'\n*** Begin Patch\n" + patch + "*** End Patch\nEOF\n"})
	return responsesCall{id, "exec_command", string(b)}
}

func execCall(id, cmd string) responsesCall {
	b, _ := json.Marshal(map[string]string{"cmd": cmd})
	return responsesCall{id, "exec_command", string(b)}
}

// The real Codex CLI, through ckfs agent codex (hooks passed for the run
// only, so nothing is written into ~/.codex): four turns (a shell edit, a
// shell write, two shell calls run in parallel, a patch Codex applies
// itself and one that fails verification) captured as windows under marks,
// each parallel write matched to its own call; then both sides rewound to
// every mark, and the real CLI resuming each fork, which sends exactly the
// kept turns and reports its own session id.
func TestRealCodexSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'total = 1\n' > calc.py`)
	c := newCodexRun(t, w)
	prompts := []string{"Turn one: change 1 to 2 in calc.py", "Turn two: write notes", "Turn three: two things at once", "Turn four: patch"}
	trees := map[int]string{1: workTree(t, w.root)}

	c.api.queue(
		responsesReply{text: "Editing.", calls: []responsesCall{execCall("call_01Sed", "sed -i 's/1/2/' calc.py")}},
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
		responsesReply{text: "Writing.", calls: []responsesCall{execCall("call_02Notes", "printf 'notes\\n' > NOTES.md")}},
		responsesReply{text: "Turn two done."},
	)
	c.agent("resume", id, prompts[1])
	trees[3] = workTree(t, w.root)

	// Codex runs both calls at once (both PreToolUse hooks, then both
	// commands): every write happens while both windows are open.
	c.api.queue(
		responsesReply{text: "Both.", calls: []responsesCall{
			execCall("call_03A", "sleep 0.5; printf 'a\\n' > a.txt; mkdir -p out && printf 'x' > out/a.log"),
			execCall("call_03B", "sleep 0.5; printf 'b\\n' > b.txt; rm NOTES.md"),
		}},
		responsesReply{text: "Turn three done."},
	)
	c.agent("resume", id, prompts[2])
	trees[4] = workTree(t, w.root)

	c.api.queue(
		responsesReply{text: "Patching.", calls: []responsesCall{patchCall("call_04Patch", "*** Add File: patched.txt\n+patched\n*** Update File: calc.py\n@@\n-total = 2\n+total = 3\n")}},
		responsesReply{text: "Again.", calls: []responsesCall{patchCall("call_04Bad", "*** Update File: missing.py\n@@\n-x\n+y\n")}},
		responsesReply{text: "Turn four done."},
	)
	c.agent("resume", id, prompts[3])
	final := workTree(t, w.root)
	for _, want := range []string{`"total = 3\n"`, "patched.txt", "a.txt", "b.txt", "out/a.log"} {
		if !strings.Contains(final, want) {
			t.Fatalf("workspace after four turns lacks %s:\n%s", want, final)
		}
	}
	if strings.Contains(final, "NOTES.md") || strings.Contains(final, "missing.py") {
		t.Fatalf("workspace after four turns:\n%s", final)
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open: %+v", st.Daemon)
	}
	log := w.ckfs("log")
	for _, re := range []string{
		`mark 4`, `window call_01Sed`, `window call_02Notes`,
		`window call_03A .*\(alongside call_03B\)\n.*\n\s+A a.txt.*\n\s+A out .*\n\s+A out/a.log`,
		`window call_03B .*\(alongside call_03A\)\n.*\n\s+D NOTES.md.*\n\s+A b.txt`,
		`window call_04Patch .*\n.*\n\s+M calc.py.*\n\s+A patched.txt`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("log does not match %s:\n%s", re, log)
		}
	}
	if strings.Contains(log, "could not be matched") {
		t.Errorf("a parallel write was not matched to its call:\n%s", log)
	}
	// The failed patch wrote nothing: its window is empty, shown with --all.
	if all := w.ckfs("log", "--all"); !strings.Contains(all, "window call_04Bad") {
		t.Errorf("log --all lacks the failed patch's window:\n%s", all)
	}
	checkBlame(t, w, "calc.py", 1, "total = 3", "call_04Patch", "", 4, prompts[3])
	checkBlame(t, w, "b.txt", 1, "b", "call_03B", "", 3, prompts[2])
	// Codex reports no PostToolUse for a patch it applies itself; its
	// result in the rollout closes the window, as finished, before the
	// next call opens.
	if regexp.MustCompile(`window call_04Patch .*(alongside|unfinished)`).MatchString(log) {
		t.Errorf("the applied patch's window stayed open into the next call or was called unfinished:\n%s", log)
	}

	keepTranscript(rs[0])

	for mark := 2; mark <= 4; mark++ {
		r, out := rewindBoth(t, w, mark, trees[mark])
		if r.Conversation == nil || !r.Conversation.Written {
			t.Fatalf("no conversation fork at mark %d:\n%s", mark, out)
		}
		child := r.Conversation.Child
		before := len(c.api.allRequests())
		c.api.queue(responsesReply{text: "Resumed."})
		res := c.agent("resume", child, fmt.Sprintf("resumed at mark %d", mark))
		if !strings.Contains(res, child) {
			t.Errorf("mark %d: the resumed fork does not report its own session id %s:\n%s", mark, child, res)
		}
		reqs := c.api.allRequests()
		if len(reqs) <= before {
			t.Fatalf("mark %d: the resumed fork sent nothing", mark)
		}
		sent, _ := json.Marshal(reqs[before]["input"])
		checkKeptTurns(t, mark, prompts, string(sent))
		undoTo(t, w, mark, final)
	}
}
