package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

func newQwenRun(t *testing.T, w *workspace) (*cliRun, *chatStandIn) {
	bin := agentBinary(t, qwenPackage, qwenVersion, "qwen")
	api := newChatStandIn(t)
	c := &cliRun{w: w, name: "qwen", home: t.TempDir(), env: []string{"CKFS_QWEN=" + bin,
		"OPENAI_API_KEY=sk-standin", "OPENAI_BASE_URL=" + api.srv.URL + "/v1", "OPENAI_MODEL=standin-model",
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}}
	// Its background memory helpers would ask the model too: off.
	c.settings(".qwen/settings.json", `{"security":{"auth":{"selectedType":"openai"}},"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false}}`)
	return c, api
}

// The real Qwen Code CLI, through ckfs agent qwen (hooks passed for the run
// only): three turns, the later ones resuming the session (a call Qwen
// refuses, a shell write and its own write_file; two calls in one model
// turn; a shell delete), each call a window under its turn's mark, none
// of Qwen's continuation prompts taken for a turn; then both sides rewound
// to every mark, and the real CLI resuming each fork, which sends exactly
// the kept turns.
func TestRealQwenSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'total = 1\n' > calc.py`)
	c, api := newQwenRun(t, w)
	run := func(args ...string) string { return c.agent(append(args, "--yolo")...) }
	prompts := []string{"Turn one: change 1 to 2", "Turn two: two files at once", "Turn three: drop the notes"}
	trees := map[int]string{1: workTree(t, w.root)}
	shell := func(id, cmd string) modelCall {
		return modelCall{id: id, name: "run_shell_command", args: map[string]any{"command": cmd, "is_background": false}}
	}
	write := func(id, name, content string) modelCall {
		return modelCall{id: id, name: "write_file", args: map[string]any{"file_path": filepath.Join(w.root, name), "content": content}}
	}

	api.queue(
		// Qwen refuses to sed a file it has not read: a failed call.
		modelReply{text: "Editing.", calls: []modelCall{shell("call_01Sed", "sed -i 's/1/2/' calc.py")}},
		modelReply{text: "Again.", calls: []modelCall{shell("call_01P", "printf 'total = 2\\n' > calc.py")}},
		modelReply{text: "Writing.", calls: []modelCall{write("call_01W", "notes.md", "notes\n")}},
		modelReply{text: "Turn one done."},
	)
	run("-p", prompts[0])
	ts, _ := filepath.Glob(filepath.Join(c.home, ".qwen", "projects", "*", "chats", "*.jsonl"))
	if len(ts) != 1 {
		t.Fatalf("qwen transcripts: %v", ts)
	}
	id := strings.TrimSuffix(filepath.Base(ts[0]), ".jsonl")
	trees[2] = workTree(t, w.root)

	api.queue(
		modelReply{text: "Both.", calls: []modelCall{write("call_02A", "a.txt", "a\n"), shell("call_02B", "mkdir -p out && printf 'b\\n' > out/b.txt")}},
		modelReply{text: "Turn two done."},
	)
	run("--resume", id, "-p", prompts[1])
	trees[3] = workTree(t, w.root)

	api.queue(
		modelReply{text: "Dropping.", calls: []modelCall{shell("call_03D", "rm notes.md")}},
		modelReply{text: "Turn three done."},
	)
	run("--resume", id, "-p", prompts[2])
	final := workTree(t, w.root)
	out := checkCaptured(t, w, final, []string{`"total = 2\n"`, "a.txt", "out/b.txt"}, []string{
		`mark 3 .*conversation ` + id,
		`window \S+  run_shell_command .*\n.*printf.*\n\s+M calc.py`,
		`window \S+  write_file .*\n.*notes.md.*\n\s+A notes.md`,
		`window \S+  write_file .*\n.*a.txt.*\n\s+A a.txt`,
		`window \S+  run_shell_command .*\n.*mkdir.*\n\s+A out .*\n\s+A out/b.txt`,
		`window \S+  run_shell_command .*\n.*rm notes.md.*\n\s+D notes.md`,
	})
	marks := regexp.MustCompile(`(?m)^mark \d+ `).FindAllString(out, -1)
	if len(marks) != 3 {
		t.Errorf("%d marks for three prompts (a continuation taken for a turn?):\n%s", len(marks), out)
	}
	if all := w.ckfs("log", "--all"); !regexp.MustCompile(`window \S+  run_shell_command .*\n.*sed -i`).MatchString(all) {
		t.Errorf("log --all lacks the refused call's window:\n%s", all)
	}
	keepTranscript(ts[0])

	forkEachMark(t, w, []int{2, 3}, trees, prompts, final, func(child, prompt string) string {
		before := len(api.seen())
		run("--resume", child, "-p", prompt)
		return firstSentSince(t, api.seen(), before, chatMessages)
	})
	if b, _ := os.ReadFile(filepath.Join(c.home, ".qwen", "settings.json")); strings.Contains(string(b), "hook") {
		t.Errorf("ckfs agent qwen wrote hooks into the user's settings: %s", b)
	}
}

// A subagent of the real Qwen Code: its Agent call runs a subagent whose
// own write_file and shell calls are each their own call's, matched to
// their process (never a guess, while the Agent call is open too), every
// window closes (the subagent's end closes what it left open), and a
// files rewind to the turn's mark takes all of it back.
func TestRealQwenSubagent(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'x = 1\n' > a.py`)
	c, api := newQwenRun(t, w)
	const task = "Write NOTES.md and bump a.py"
	api.queueWhen(func(req map[string]any) bool { return strings.Contains(firstUserMessage(req), task) },
		modelReply{text: "Writing.", calls: []modelCall{{id: "call_09SubWrite", name: "write_file", args: map[string]any{"file_path": filepath.Join(w.root, "NOTES.md"), "content": "# Notes\n"}}}},
		modelReply{text: "Bumping.", calls: []modelCall{{id: "call_09SubShell", name: "run_shell_command", args: map[string]any{"command": "printf 'x = 2\\n' > a.py", "is_background": false}}}},
		modelReply{text: "Subagent done."},
	)
	api.queue(
		modelReply{text: "Delegating.", calls: []modelCall{{id: "call_09Agent", name: "agent", args: map[string]any{
			"description": "Write notes", "prompt": task, "subagent_type": "general-purpose"}}}},
		modelReply{text: "Turn done."},
	)
	before := workTree(t, w.root)
	c.agent("-p", "Delegate the notes", "--yolo")
	deadline := time.Now().Add(30 * time.Second)
	for (w.read("a.py") != "x = 2\n" || len(w.status().Daemon.OpenWindows) > 0) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	log := w.ckfs("log", "--all")
	if w.read("NOTES.md") != "# Notes\n" || w.read("a.py") != "x = 2\n" {
		t.Fatalf("the subagent's calls did not run:\n%s\n%s", workTree(t, w.root), log)
	}
	if st := w.status(); len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open: %v\n%s", st.Daemon.OpenWindows, log)
	}
	// Qwen names its calls itself: tell them by their tools.
	recs := w.records()
	tool := map[string]string{}
	for _, win := range index.Windows(recs) {
		tool[win.ID] = win.Tool
	}
	owner := map[string]index.Record{}
	for _, r := range recs {
		if r.IsImage() && r.Window != "" {
			owner[r.Path] = r
		}
	}
	for path, want := range map[string]string{"NOTES.md": "write_file", "a.py": "run_shell_command"} {
		if r := owner[path]; tool[r.Window] != want || r.By == index.ByGuess {
			t.Errorf("%s recorded in window %q (%s, by %q), want the subagent's %s call, matched to its process:\n%s", path, r.Window, tool[r.Window], r.By, want, log)
		}
	}
	w.ckfs("rewind", "--files", "--mark", "1")
	if got := workTree(t, w.root); got != before {
		t.Fatalf("a rewind to before the turn left\n%s\nwant\n%s", got, before)
	}
}

// firstUserMessage is the text of a chat completions request's first user
// message: the prompt a conversation (or a subagent's) began with.
func firstUserMessage(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "user" {
			b, _ := json.Marshal(mm["content"])
			return string(b)
		}
	}
	return ""
}
