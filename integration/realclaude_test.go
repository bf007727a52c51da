package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/ckfs-dev/ckfs/index"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// claudeRun is the real claude CLI against the stand-in, in a private HOME.
type claudeRun struct {
	w    *workspace
	bin  string
	api  *anthropicStandIn
	home string
	run  string // XDG_RUNTIME_DIR: where claude puts its sockets
}

func newClaudeRun(t *testing.T, w *workspace) *claudeRun {
	return claudeRunOf(t, w, agentBinary(t, claudePackage, claudeVersion, "claude"))
}

// claudeRunOf is a run of the claude binary bin.
func claudeRunOf(t *testing.T, w *workspace, bin string) *claudeRun {
	// Claude Code puts a socket in $XDG_RUNTIME_DIR/cc-socks, or in
	// /tmp/cc-socks-UID when that path is too long for a socket (a test's
	// temporary directory is): give it a short directory of its own.
	run, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	return &claudeRun{w: w, bin: bin, api: newAnthropicStandIn(t), home: t.TempDir(), run: run}
}

func (c *claudeRun) env() []string {
	// TMPDIR: Claude Code keeps per-project files under it.
	return append(c.w.env(), "HOME="+c.home, "TMPDIR="+c.home, "XDG_RUNTIME_DIR="+c.run, "CKFS_CLAUDE="+c.bin,
		"ANTHROPIC_BASE_URL="+c.api.srv.URL, "ANTHROPIC_API_KEY=sk-ant-standin-0000",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1")
}

// agent runs `ckfs agent claude ARGS` in the workspace and returns its
// output.
func (c *claudeRun) agent(args ...string) string {
	c.w.t.Helper()
	cmd := exec.Command(ckfsBin, append([]string{"agent", "claude"}, args...)...)
	cmd.Dir, cmd.Env = c.w.root, c.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		c.w.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.w.t.Fatalf("ckfs agent claude %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		c.w.t.Fatalf("ckfs agent claude %s: still running after 3 minutes\n%s", strings.Join(args, " "), out.String())
	}
	return out.String()
}

// transcripts lists the session transcripts claude wrote for the workspace.
func (c *claudeRun) transcripts() []string {
	m, _ := filepath.Glob(filepath.Join(c.home, ".claude", "projects", "*", "*.jsonl"))
	return m
}

// userTexts returns every text the user side of a request holds (prompts
// and tool results), to tell which turns a resumed session carried.
func userTexts(req map[string]any) string {
	b, _ := json.Marshal(req["messages"])
	return string(b)
}

// The real Claude Code CLI, driven through ckfs agent claude against the
// stand-in: three turns (a shell edit, the agent's own Write tool and a
// shell call in parallel, a call the permission settings reject), each
// captured as windows under marks; the rejected call is closed at the end
// of its turn; then rewinds at the marks in every combination, and the real
// CLI resuming each conversation fork, the stand-in seeing exactly the kept
// turns.
func TestRealClaudeSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'total = 1\n' > calc.py`)
	c := newClaudeRun(t, w)
	trees := map[int]string{1: workTree(t, w.root)}
	prompts := []string{"Turn one: change 1 to 2 in calc.py", "Turn two: add notes and a test", "Turn three: try an edit you may not make", "Turn four: run a failing command"}

	c.api.queue(
		standInReply{text: "Editing.", calls: []standInCall{{"toolu_01Sed", "Bash", map[string]any{"command": "sed -i 's/1/2/' calc.py", "description": "edit"}}}},
		standInReply{text: "Turn one done."},
	)
	c.agent("-p", prompts[0], "--allowedTools", "Bash,Write")
	sessions := c.transcripts()
	if len(sessions) != 1 {
		t.Fatalf("transcripts after turn one: %v", sessions)
	}
	sid := strings.TrimSuffix(filepath.Base(sessions[0]), ".jsonl")
	trees[2] = workTree(t, w.root)

	notes := filepath.Join(w.root, "NOTES.md")
	c.api.queue(
		standInReply{text: "Two at once.", calls: []standInCall{
			{"toolu_02Write", "Write", map[string]any{"file_path": notes, "content": "# Notes\n"}},
			{"toolu_02Bash", "Bash", map[string]any{"command": "printf 'assert True\\n' > test_calc.py", "description": "test"}},
		}},
		standInReply{text: "Turn two done."},
	)
	c.agent("-p", "--resume", sid, prompts[1], "--allowedTools", "Bash,Write")
	trees[3] = workTree(t, w.root)

	c.api.queue(
		standInReply{text: "Trying.", calls: []standInCall{{"toolu_03Denied", "Bash", map[string]any{"command": "rm calc.py", "description": "remove"}}}},
		standInReply{text: "I was not allowed."},
	)
	c.agent("-p", "--resume", sid, prompts[2], "--allowedTools", "Write")
	trees[4] = workTree(t, w.root)

	// Turn four: a call that runs and fails (its Post event is
	// PostToolUseFailure): closed as any finished call.
	c.api.queue(
		standInReply{text: "Trying.", calls: []standInCall{{"toolu_04Fail", "Bash", map[string]any{"command": "printf 'half\\n' > half.txt; exit 3", "description": "fail"}}}},
		standInReply{text: "It failed."},
	)
	c.agent("-p", "--resume", sid, prompts[3], "--allowedTools", "Bash")
	final := workTree(t, w.root)
	if !strings.Contains(final, "calc.py") || !strings.Contains(final, "NOTES.md") || !strings.Contains(final, "test_calc.py") {
		t.Fatalf("the workspace after three turns:\n%s", final)
	}

	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open after the session: %+v", st.Daemon)
	}
	log := w.ckfs("log", "--all")
	for _, want := range []string{"mark 4", "window toolu_01Sed", "window toolu_02Write", "window toolu_02Bash", "window toolu_03Denied  Bash", "window toolu_04Fail", "A half.txt"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !regexp.MustCompile(`toolu_04Fail .*\(failed\)`).MatchString(log) {
		t.Errorf("the failed call is not marked failed:\n%s", log)
	}
	if !regexp.MustCompile(`toolu_03Denied .*unfinished`).MatchString(log) || regexp.MustCompile(`toolu_04Fail .*unfinished`).MatchString(log) {
		t.Errorf("the rejected call is not closed as unfinished, or the failed one is:\n%s", log)
	}
	checkBlame(t, w, "calc.py", 1, "total = 2", "toolu_01Sed", "Bash", 1, prompts[0])
	checkBlame(t, w, "NOTES.md", 1, "# Notes", "toolu_02Write", "Write", 2, prompts[1])
	checkView(t, w, 2, trees[2])
	checkView(t, w, 3, trees[3])
	if out := w.ckfs("bisect", "--test", "grep -q 'total = 1' calc.py"); !strings.Contains(out, "first bad window: toolu_01Sed  Bash") || !strings.Contains(out, prompts[0]) {
		t.Errorf("bisect over the session did not name the call that changed calc.py:\n%s", out)
	}

	// The other combinations at mark 2: files only leaves the
	// conversation alone, conversation only leaves the files alone, and
	// neither (a preview) changes nothing at all.
	count := len(c.transcripts())
	w.ckfs("rewind", "--mark", "2", "--files")
	if workTree(t, w.root) != trees[2] || len(c.transcripts()) != count {
		t.Errorf("files only at mark 2: files wrong or a transcript was written")
	}
	w.ckfs("rewind", "--files", "--undo")
	w.ckfs("rewind", "--mark", "2", "--conversation")
	if workTree(t, w.root) != final || len(c.transcripts()) != count+1 {
		t.Errorf("conversation only at mark 2: the files changed or no fork was written")
	}
	w.ckfs("rewind", "--mark", "2")
	if workTree(t, w.root) != final || len(c.transcripts()) != count+1 {
		t.Errorf("neither side at mark 2 changed something")
	}

	keepTranscript(sessions[0])

	// Every mark, both sides: the files are as they were when the mark
	// was written, and resuming the fork sends exactly the kept turns.
	for mark := 1; mark <= 4; mark++ {
		r, out := rewindBoth(t, w, mark, trees[mark])
		if mark == 1 {
			// Nothing had been said at the first prompt.
			if r.Conversation != nil && r.Conversation.Written {
				t.Errorf("mark 1 forked a conversation: %s", out)
			}
		} else {
			if r.Conversation == nil || r.Conversation.Transcript == nil || !r.Conversation.Written {
				t.Fatalf("mark %d: no conversation fork: %s", mark, out)
			}
			before := len(c.api.agentRequests())
			c.api.queue(standInReply{text: "Resumed."})
			c.agent("-p", "--resume", r.Conversation.Child, fmt.Sprintf("resumed at mark %d", mark), "--allowedTools", "Bash,Write")
			reqs := c.api.agentRequests()
			if len(reqs) <= before {
				t.Fatalf("mark %d: the resumed fork sent nothing", mark)
			}
			checkKeptTurns(t, mark, prompts, userTexts(reqs[before]))
		}
		if trees[mark] == final {
			continue // nothing was rewound, so there is nothing to undo
		}
		undoTo(t, w, mark, final)
	}
}

// ckfs hooks install claude writes the hooks into the user's own
// settings; the real claude, started by hand on a mounted workspace, is
// then captured.
func TestRealClaudeWithInstalledHooks(t *testing.T) {
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c := newClaudeRun(t, w)
	install := exec.Command(ckfsBin, "hooks", "install", "claude")
	install.Env = c.env()
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "added") {
		t.Fatalf("hooks install: %v\n%s", err, out)
	}
	// The hooks run the small hook executable installed beside ckfs.
	if out, _ := exec.Command(ckfsBin, "hooks", "print", "claude").Output(); !strings.Contains(string(out), filepath.Join(filepath.Dir(ckfsBin), "ckfs-hook")+" claude") {
		t.Fatalf("hooks print does not run ckfs-hook:\n%s", out)
	}
	if out, _ := exec.Command(ckfsBin, "doctor").CombinedOutput(); !strings.Contains(string(out), "OK    agent hooks: run "+filepath.Join(filepath.Dir(ckfsBin), "ckfs-hook")) {
		t.Fatalf("doctor does not say the hooks run ckfs-hook:\n%s", out)
	}
	c.api.queue(
		standInReply{calls: []standInCall{{"toolu_09Inst", "Bash", map[string]any{"command": "sed -i 's/1/9/' a.py", "description": "edit"}}}},
		standInReply{text: "Done."},
	)
	run := exec.Command(c.bin, "-p", "Set x to 9", "--allowedTools", "Bash")
	run.Dir, run.Env = w.root, c.env()
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	if got := w.read("a.py"); got != "x = 9\n" {
		t.Fatalf("a.py = %q", got)
	}
	if log := w.ckfs("log"); !strings.Contains(log, "window toolu_09Inst") || !strings.Contains(log, "mark 1") {
		t.Errorf("the hand-started claude was not captured:\n%s", log)
	}
}

// A call left running: Claude Code's Bash with run_in_background reports
// back at once and its command goes on writing. The call's window closes
// when it reports back; the later write is still the call's (a
// continuation of its window, matched by the call's command on the
// writer's ancestry), so a files rewind to before the turn takes it back
// with the rest of the call, and undoing that rewind brings it back.
func TestRealClaudeBackgroundCall(t *testing.T) {
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c := newClaudeRun(t, w)
	c.api.queue(
		standInReply{text: "In the background.", calls: []standInCall{{"toolu_07Bg", "Bash", map[string]any{
			"command": "sed -i 's/1/2/' a.py; sleep 1; printf 'late\\n' > late.txt", "description": "bg", "run_in_background": true}}}},
		standInReply{text: "Started."},
	)
	c.agent("-p", "Run it in the background", "--allowedTools", "Bash")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(workTree(t, w.root), "late.txt") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open: %+v", st.Daemon)
	}
	// The background command's late write is its call's still: a
	// continuation of its window, which a rewind to before the turn takes
	// back like the rest of the call.
	log := w.ckfs("log")
	if !regexp.MustCompile(`continuation of window toolu_07Bg[^\n]*\n(\s+[MAD] [^\n]*\n)*\s+A late.txt`).MatchString(log) || !strings.Contains(log, "window toolu_07Bg") {
		t.Fatalf("log:\n%s", log)
	}
	rewindLateWrite(t, w)
	w.ckfs("rewind", "--files", "--undo")
	if got := w.read("late.txt"); got != "late\n" {
		t.Fatalf("undo did not bring the late write back: %q", got)
	}
}

// A command a shell call leaves running with & outlives its shell: Claude
// Code starts each call's shell in a session of its own, so the command is
// reparented away from the agent before it writes. It still carries the
// run id ckfs agent gave the agent, and its write is its call's (a
// continuation), not an edit of the user's that every later rewind over it
// would refuse to drop.
func TestRealClaudeReparentedBackgroundWrite(t *testing.T) {
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c := newClaudeRun(t, w)
	c.api.queue(
		standInReply{text: "Leaving it running.", calls: []standInCall{{"toolu_08Amp", "Bash", map[string]any{
			"command": "sed -i 's/1/2/' a.py; (sleep 1; printf 'late\\n' > late.txt) >/dev/null 2>&1 &", "description": "amp"}}}},
		standInReply{text: "Started."},
	)
	c.agent("-p", "Leave it running", "--allowedTools", "Bash")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(workTree(t, w.root), "late.txt"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command left running never wrote late.txt")
		}
	}
	lateWriteIsTheCalls(t, w, "toolu_08Amp")
	rewindLateWrite(t, w)
}

// The real Claude Code killed in the middle of a call whose command runs
// on: the call's window closes as unfinished once the agent is gone, the
// command's later write is the call's continuation, not the user's edit,
// and a rewind to before the turn takes both back.
func TestRealClaudeKilledMidCall(t *testing.T) {
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c := newClaudeRun(t, w)
	c.api.queue(
		standInReply{text: "A long one.", calls: []standInCall{{"toolu_09Long", "Bash", map[string]any{
			"command": "sed -i 's/1/2/' a.py; sleep 2; printf 'late\\n' > late.txt", "description": "long"}}}},
		standInReply{text: "Done."},
	)
	cmd := exec.Command(ckfsBin, "agent", "claude", "-p", "Run the long one", "--allowedTools", "Bash")
	cmd.Dir, cmd.Env = w.root, c.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); w.read("a.py") != "x = 2\n"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call never edited a.py")
		}
	}
	// The agent and ckfs agent die; the call's shell, in a session of
	// its own, runs on.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if st := w.status(); strings.Contains(workTree(t, w.root), "late.txt") && st.Daemon != nil && len(st.Daemon.OpenWindows) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %+v\n%s", w.status().Daemon, workTree(t, w.root))
		}
	}
	if log := lateWriteIsTheCalls(t, w, "toolu_09Long"); !regexp.MustCompile(`window toolu_09Long .*unfinished`).MatchString(log) {
		t.Fatalf("the killed call's window is not unfinished:\n%s", log)
	}
	rewindLateWrite(t, w)
}

// lateWriteIsTheCalls checks that ckfs log shows late.txt written as a
// continuation of the window id, and nothing as the user's; it returns
// the log.
func lateWriteIsTheCalls(t *testing.T, w *workspace, id string) string {
	t.Helper()
	log := w.ckfs("log")
	if !regexp.MustCompile(`continuation of window `+id+`[^\n]*\n(\s+[MAD] [^\n]*\n)*\s+A late.txt`).MatchString(log) || strings.Contains(log, "outside any window") {
		t.Fatalf("the late write is not the call's:\n%s", log)
	}
	return log
}

// rewindLateWrite rewinds the files to mark 1 and checks that a.py is
// back to x = 1 and the call's late.txt is gone.
func rewindLateWrite(t *testing.T, w *workspace) {
	t.Helper()
	if out, code := w.exitCode(nil, "rewind", "--files", "--mark", "1"); code != 0 {
		t.Fatalf("a rewind over the call's late write: exit %d\n%s", code, out)
	}
	if got := w.read("a.py"); got != "x = 1\n" || strings.Contains(workTree(t, w.root), "late.txt") {
		t.Fatalf("after the rewind:\n%s", workTree(t, w.root))
	}
}

// A background task that finishes mid-turn: the real CLI tells the model
// with a <task-notification> while a later call of the same turn runs.
// That notification is no prompt of the user's, so it makes no mark; the
// next real prompt does, and both sides rewind to it, the resumed fork
// carrying the whole first turn (the notification included) and nothing
// of the second.
func TestRealClaudeTaskNotification(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c := newClaudeRun(t, w)
	prompts := []string{"Turn one: start a job in the background", "Turn two: one more edit"}
	c.api.queue(
		standInReply{text: "In the background.", calls: []standInCall{{"toolu_10Bg", "Bash", map[string]any{
			"command": "sleep 1; printf 'late\\n' > late.txt", "description": "bg", "run_in_background": true}}}},
		standInReply{text: "Meanwhile.", calls: []standInCall{{"toolu_10Fg", "Bash", map[string]any{
			"command": "sleep 5; printf 'fg\\n' > fg.txt", "description": "fg"}}}},
		standInReply{text: "Turn one done."},
		standInReply{text: "Noted."},
	)
	c.agent("-p", prompts[0], "--allowedTools", "Bash")
	notified := false
	for _, r := range c.api.agentRequests() {
		notified = notified || strings.Contains(userTexts(r), "task-notification")
	}
	if !notified {
		var last []string
		for _, r := range c.api.agentRequests() {
			m, _ := r["messages"].([]any)
			b, _ := json.Marshal(m[len(m)-1])
			last = append(last, fmt.Sprintf("%.300s", b))
		}
		t.Fatalf("the CLI sent no task notification; the last message of each request:\n%s\nlog:\n%s", strings.Join(last, "\n"), w.ckfs("log"))
	}
	sessions := c.transcripts()
	if len(sessions) != 1 {
		t.Fatalf("transcripts after turn one: %v", sessions)
	}
	sid := strings.TrimSuffix(filepath.Base(sessions[0]), ".jsonl")
	mid := workTree(t, w.root)

	c.api.queue(
		standInReply{text: "Editing.", calls: []standInCall{{"toolu_11Sed", "Bash", map[string]any{"command": "sed -i 's/1/2/' a.py", "description": "edit"}}}},
		standInReply{text: "Turn two done."},
	)
	c.agent("-p", "--resume", sid, prompts[1], "--allowedTools", "Bash")
	log := w.ckfs("log", "--all")
	if strings.Contains(log, "mark 3") || !strings.Contains(log, "mark 2") {
		t.Fatalf("want one mark per prompt of the user's:\n%s", log)
	}
	// Every mark written is a cut a conversation rewind accepts.
	r, out := rewindBoth(t, w, 2, mid)
	if r.Conversation == nil || !r.Conversation.Written {
		t.Fatalf("mark 2: no conversation fork: %s", out)
	}
	before := len(c.api.agentRequests())
	c.api.queue(standInReply{text: "Resumed."})
	c.agent("-p", "--resume", r.Conversation.Child, "resumed at mark 2", "--allowedTools", "Bash")
	reqs := c.api.agentRequests()
	if len(reqs) <= before {
		t.Fatal("the resumed fork sent nothing")
	}
	sent := userTexts(reqs[before])
	checkKeptTurns(t, 2, prompts, sent)
	if !strings.Contains(sent, "toolu_10Fg") {
		t.Errorf("the fork lost the first turn's last call:\n%s", sent)
	}
}

// The daemon killed in the middle of a real Claude Code turn (the turn's
// own first call kills it, then goes on writing): a successor takes the
// mount over, the CLI finishes the turn with no tool reporting an error,
// the call's writes before and after the death stay the call's (its
// window in two parts), and a rewind to the turn's mark takes the whole
// turn back exactly.
func TestRealClaudeDaemonKilledMidTurn(t *testing.T) {
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	if daemonState(t, w).Supervisor == 0 {
		t.Skip("this mount cannot outlive its daemon (kernel before 6.9)")
	}
	before := workTree(t, w.root)
	c := newClaudeRun(t, w)
	kill := `sed -i 's/1/2/' a.py && kill -9 "$(sed -n 's/^  "pid": \([0-9]*\),$/\1/p' "$CKFS_STORE/daemon.json")" && sleep 0.2 && printf 'after = 3\n' >> a.py && echo killed`
	c.api.queue(
		standInReply{text: "Editing.", calls: []standInCall{{"toolu_K1", "Bash", map[string]any{"command": kill, "description": "edit and kill"}}}},
		standInReply{text: "More.", calls: []standInCall{{"toolu_K2", "Bash", map[string]any{"command": "printf 'two\\n' > b.txt && cat a.py", "description": "more"}}}},
		standInReply{text: "Done."},
	)
	old := w.pid
	c.agent("-p", "Edit, then go on", "--allowedTools", "Bash")
	w.refreshPids()
	if w.pid == old {
		t.Fatalf("the daemon was not replaced (pid %d):\n%s", old, lastLog(w))
	}
	if got := w.read("a.py"); got != "x = 2\nafter = 3\n" {
		t.Fatalf("a.py after the turn = %q", got)
	}
	results := userTexts(c.api.agentRequests()[len(c.api.agentRequests())-1])
	if !strings.Contains(results, "killed") || !strings.Contains(results, "after = 3") || strings.Contains(results, `"is_error":true`) {
		t.Fatalf("the tool results the model got:\n%s", results)
	}
	log := w.ckfs("log")
	if strings.Count(log, "window toolu_K1") != 2 || !strings.Contains(log, "interrupted") || !strings.Contains(log, "window toolu_K2") {
		t.Fatalf("log:\n%s", log)
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open: %+v", st.Daemon)
	}
	w.ckfs("rewind", "--files", "--mark", "1")
	if got := workTree(t, w.root); got != before {
		t.Fatalf("after a rewind to the turn's mark:\n%s\nwant\n%s", got, before)
	}
}

// A subagent: the real CLI's Task call (named Agent in the pinned version,
// which reports back at once and lets the subagent run beside the main
// conversation) runs a subagent whose Write call is still under way when
// the main thread's turn ends, and whose refused call is closed when the
// subagent ends. Each of the subagent's writes is its own call's,
// matched to its process (never a guess, which would make a revert of
// that call refuse), the Task call holds none, a revert of one of them
// takes out only that call, and a files rewind to before the turn takes
// everything back.
func TestRealClaudeSubagent(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c := newClaudeRun(t, w)
	notes := filepath.Join(w.root, "NOTES.md")
	const task = "Write NOTES.md and bump a.py"
	// The subagent's Write is under way (its window open) when the main
	// thread's turn ends and its Stop hook runs; it writes after that (a
	// hook of the user's holds it 3 s), and must still be the call's.
	userSettings := filepath.Join(c.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(userSettings), 0o755)
	os.WriteFile(userSettings, []byte(`{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"sleep 3"}]}]}}`), 0o644)
	started := make(chan struct{})
	c.api.queueWhen(func(req map[string]any) bool { return strings.Contains(firstMessage(req), task) },
		standInReply{text: "Writing.", sent: func() { close(started) }, calls: []standInCall{{"toolu_08SubWrite", "Write", map[string]any{"file_path": notes, "content": "# Notes\n"}}}},
		standInReply{text: "Bumping.", calls: []standInCall{{"toolu_08SubBash", "Bash", map[string]any{"command": "sed -i 's/1/2/' a.py", "description": "bump"}}}},
		// Not allowed: no Post event; the subagent's end closes it.
		standInReply{text: "Editing.", calls: []standInCall{{"toolu_08SubDenied", "Edit", map[string]any{"file_path": filepath.Join(w.root, "a.py"), "old_string": "x", "new_string": "y"}}}},
		standInReply{text: "Subagent done."},
	)
	c.api.queue(
		standInReply{text: "Delegating.", calls: []standInCall{{"toolu_08Task", "Task", map[string]any{
			"description": "Write notes", "prompt": task, "subagent_type": "general-purpose"}}}},
		standInReply{text: "Turn done.", wait: func() {
			select {
			case <-started:
				time.Sleep(time.Second)
			case <-time.After(20 * time.Second):
			}
		}},
	)
	before := workTree(t, w.root)
	c.agent("-p", "Delegate the notes", "--allowedTools", "Task,Agent,Write,Bash")
	deadline := time.Now().Add(30 * time.Second)
	for (!strings.Contains(workTree(t, w.root), "NOTES.md") || w.read("a.py") != "x = 2\n" || len(w.status().Daemon.OpenWindows) > 0) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := w.read("NOTES.md"); got != "# Notes\n" || w.read("a.py") != "x = 2\n" {
		t.Fatalf("the subagent's calls did not run:\n%s\n%s", workTree(t, w.root), w.ckfs("log", "--all"))
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open after the subagent ended: %+v\n%s", st.Daemon, w.ckfs("log", "--all"))
	}
	if log := w.ckfs("log", "--all"); !regexp.MustCompile(`toolu_08SubDenied .*unfinished`).MatchString(log) {
		t.Errorf("the subagent's refused call is not closed as unfinished:\n%s", log)
	}
	owner := map[string]index.Record{}
	for _, r := range w.records() {
		if r.IsImage() && r.Window != "" {
			owner[r.Path] = r
		}
	}
	for path, want := range map[string]string{"NOTES.md": "toolu_08SubWrite", "a.py": "toolu_08SubBash"} {
		if r := owner[path]; r.Window != want || r.By == index.ByGuess {
			t.Errorf("%s recorded in window %q (by %q), want %s, matched to its process:\n%s", path, r.Window, r.By, want, w.ckfs("log", "--all"))
		}
	}
	if out, code := w.exitCode(nil, "revert", "toolu_08SubWrite"); code != 0 {
		t.Fatalf("a revert of the subagent's first call: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(notes); !os.IsNotExist(err) || w.read("a.py") != "x = 2\n" {
		t.Fatalf("the revert of the first call took out more or less than NOTES.md:\n%s", workTree(t, w.root))
	}
	w.ckfs("rewind", "--files", "--mark", "1")
	if got := workTree(t, w.root); got != before {
		t.Fatalf("a rewind to before the turn left\n%s\nwant\n%s", got, before)
	}
}

// firstMessage is the text of a Messages API request's first message: the
// prompt a conversation (or a subagent's) began with.
func firstMessage(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	b, _ := json.Marshal(msgs[0])
	return string(b)
}
