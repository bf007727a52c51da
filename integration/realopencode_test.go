package integration

import (
	"strings"
	"testing"
)

// The real OpenCode CLI, through ckfs agent opencode (its plugin named in
// a configuration file of ckfs's for the run, nothing written into
// ~/.config/opencode): two turns (a shell edit and its own write tool; a
// shell delete in the continued session), each call a window named by
// OpenCode's call id under its turn's mark; a files rewind to the second
// mark and its undo; a conversation rewind refused with the reason.
func TestRealOpenCodeSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	w := mountWorkspace(t, `printf 'total = 1\n' > calc.py`)
	bin := agentBinary(t, opencodePackage, opencodeVersion, "opencode")
	api := newChatStandIn(t)
	c := &cliRun{w: w, name: "opencode", home: t.TempDir(), env: []string{"CKFS_OPENCODE=" + bin, "OPENCODE_DISABLE_AUTOUPDATE=1"}}
	c.settings(".config/opencode/opencode.json", `{"model":"standin/standin-model","autoupdate":false,"share":"disabled",
 "permission":{"edit":"allow","bash":"allow"},
 "provider":{"standin":{"npm":"@ai-sdk/openai-compatible","name":"Standin","options":{"baseURL":"`+api.srv.URL+`/v1","apiKey":"sk-standin"},"models":{"standin-model":{"name":"Standin"}}}}}`)

	before := workTree(t, w.root)
	api.queue(
		modelReply{text: "Editing.", calls: []modelCall{{id: "call_01Sed", name: "bash", args: map[string]any{"command": "sed -i 's/1/2/' calc.py", "description": "edit"}}}},
		modelReply{text: "Writing.", calls: []modelCall{{id: "call_01W", name: "write", args: map[string]any{"filePath": w.root + "/notes.md", "content": "notes\n"}}}},
		modelReply{text: "Turn one done."},
	)
	c.agent("run", "Turn one: change 1 to 2")
	second := workTree(t, w.root)
	api.queue(
		modelReply{text: "Dropping.", calls: []modelCall{{id: "call_02D", name: "bash", args: map[string]any{"command": "rm notes.md", "description": "drop"}}}},
		modelReply{text: "Turn two done."},
	)
	c.agent("run", "--continue", "Turn two: drop the notes")
	final := workTree(t, w.root)
	if !strings.Contains(second, "notes.md") || strings.Contains(final, "notes.md") || !strings.Contains(final, `"total = 2\n"`) {
		t.Fatalf("workspace after two turns:\n%s", final)
	}
	checkCaptured(t, w, final, nil, []string{
		`mark 2 .*\n.*Turn two`, `mark 1 .*\n.*Turn one`,
		`window call_01Sed  bash .*\n.*sed -i.*\n\s+M calc.py`,
		`window call_01W  write .*\n.*notes.md.*\n\s+A notes.md`,
		`window call_02D  bash .*\n.*rm notes.md.*\n\s+D notes.md`,
	})
	w.ckfs("rewind", "--mark", "2", "--files")
	if got := workTree(t, w.root); got != second {
		t.Errorf("files at mark 2:\n%s\nwant\n%s", got, second)
	}
	undoTo(t, w, 2, final)
	w.ckfs("rewind", "--mark", "1", "--files")
	if got := workTree(t, w.root); got != before {
		t.Errorf("files at mark 1:\n%s\nwant\n%s", got, before)
	}
	undoTo(t, w, 1, final)
	if out, err := w.ckfsErr("rewind", "--mark", "2", "--conversation"); err == nil || !strings.Contains(out, "OpenCode") {
		t.Errorf("a conversation rewind of an OpenCode mark: %v\n%s", err, out)
	}
}
