package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newGeminiRun(t *testing.T, w *workspace) (*cliRun, *geminiStandIn) {
	bin := agentBinary(t, geminiPackage, geminiVersion, "gemini")
	api := newGeminiStandIn(t)
	c := &cliRun{w: w, name: "gemini", home: t.TempDir(), env: []string{"CKFS_GEMINI=" + bin,
		"GEMINI_API_KEY=standin", "GOOGLE_GEMINI_BASE_URL=" + api.srv.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"}}
	// Gemini's own session cleanup (on by default) deletes every file of
	// a session that has a file without a conversation in it, which its
	// resume in a later minute leaves behind: it would delete the sessions
	// this test resumes. Off, as docs/format.md advises.
	c.settings(".gemini/settings.json", `{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"sessionRetention":{"enabled":false}}}`)
	return c, api
}

// geminiSession is the id in the header of the one session log gemini
// wrote for the workspace.
func geminiSession(t *testing.T, c *cliRun) (id, path string) {
	logs, _ := filepath.Glob(filepath.Join(c.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("gemini session logs: %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	var h struct{ SessionID string }
	first, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(first), &h); err != nil || h.SessionID == "" {
		t.Fatalf("gemini session log header: %s", first)
	}
	return h.SessionID, logs[0]
}

// The real Gemini CLI, through ckfs agent gemini (hooks passed for the run
// only, nothing written into ~/.gemini): three turns, the second and third
// in processes that resume the session (a shell edit and the CLI's own
// write_file; two calls in one model turn; a shell delete), each call a
// window under its turn's mark although Gemini's hooks carry no call id;
// then both sides rewound to every mark, and the real CLI resuming each
// fork, which sends exactly the kept turns and writes to the fork's log.
func TestRealGeminiSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'total = 1\n' > calc.py`)
	c, api := newGeminiRun(t, w)
	run := func(args ...string) string { return c.agent(append(args, "--yolo", "-m", "gemini-2.5-pro")...) }
	prompts := []string{"Turn one: change 1 to 2", "Turn two: two files at once", "Turn three: drop the notes"}
	trees := map[int]string{1: workTree(t, w.root)}

	api.queue(
		modelReply{text: "Editing.", calls: []modelCall{{name: "run_shell_command", args: map[string]any{"command": "sed -i 's/1/2/' calc.py"}}}},
		modelReply{text: "Writing.", calls: []modelCall{{name: "write_file", args: map[string]any{"file_path": "notes.md", "content": "notes\n"}}}},
		modelReply{text: "Turn one done."},
	)
	run("-p", prompts[0])
	id, log := geminiSession(t, c)
	trees[2] = workTree(t, w.root)
	// A process that resumes the session names a log of the minute it
	// started in its SessionStart, while the turns go on in the file it
	// resumed: make that happen on every run, not only across a minute.
	older := filepath.Join(filepath.Dir(log), "session-2026-01-01T00-00-"+id[:8]+".jsonl")
	if err := os.Rename(log, older); err != nil {
		t.Fatal(err)
	}
	log = older

	api.queue(
		modelReply{text: "Both.", calls: []modelCall{
			{name: "write_file", args: map[string]any{"file_path": "a.txt", "content": "a\n"}},
			{name: "run_shell_command", args: map[string]any{"command": "mkdir -p out && printf 'b\\n' > out/b.txt"}},
		}},
		modelReply{text: "Turn two done."},
	)
	run("--resume", id, "-p", prompts[1])
	trees[3] = workTree(t, w.root)

	api.queue(
		modelReply{text: "Dropping.", calls: []modelCall{{name: "run_shell_command", args: map[string]any{"command": "rm notes.md"}}}},
		modelReply{text: "Turn three done."},
	)
	run("--resume", id, "-p", prompts[2])
	final := workTree(t, w.root)
	checkCaptured(t, w, final, []string{`"total = 2\n"`, "a.txt", "out/b.txt"}, []string{
		`mark 3 .*conversation ` + id, `mark 1 `,
		`window gemini-\w+  run_shell_command .*\n.*sed -i.*\n\s+M calc.py`,
		`window gemini-\w+  write_file .*\n.*notes.md.*\n\s+A notes.md`,
		`window gemini-\w+  write_file .*\n.*a.txt.*\n\s+A a.txt`,
		`window gemini-\w+  run_shell_command .*\n.*mkdir.*\n\s+A out .*\n\s+A out/b.txt`,
		`window gemini-\w+  run_shell_command .*\n.*rm notes.md.*\n\s+D notes.md`,
	})
	keepTranscript(log)

	forkEachMark(t, w, []int{2, 3}, trees, prompts, final, func(child, prompt string) string {
		before := len(api.seen())
		run("--resume", child, "-p", prompt)
		return firstSentSince(t, api.seen(), before, geminiContents)
	})
	if _, err := os.Stat(filepath.Join(c.home, ".gemini", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(c.home, ".gemini", "settings.json")); strings.Contains(string(b), "hook") {
		t.Errorf("ckfs agent gemini wrote hooks into the user's settings: %s", b)
	}
}
