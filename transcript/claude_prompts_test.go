package transcript

import (
	"bytes"
	"encoding/json"
	"testing"
)

const sid = "5b0e7a3c-2f4d-4c6b-9a1e-8d7f6c5b4a39"

func claudeLineJSON(uuid, parent, typ, content string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"parentUuid":` + p + `,"isSidechain":false,"type":"` + typ + `","message":{"role":"` + typ + `","content":` + content + `},"uuid":"` + uuid + `","sessionId":"` + sid + `","cwd":"/w"}` + "\n"
}

// A prompt written as content blocks (text and a pasted image) and a slash
// command are recognised as the prompts the hook saw, so a mark points
// just before them.
func TestClaudePromptForms(t *testing.T) {
	u := func(n string) string { return "0000000" + n + "-0000-4000-8000-000000000000" }
	text := claudeLineJSON(u("1"), "", "user", `"first"`) +
		claudeLineJSON(u("2"), u("1"), "assistant", `[{"type":"text","text":"ok"}]`) +
		claudeLineJSON(u("3"), u("2"), "user", `[{"type":"text","text":"look at this"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]`) +
		claudeLineJSON(u("4"), u("3"), "assistant", `[{"type":"text","text":"seen"}]`) +
		claudeLineJSON(u("5"), u("4"), "user", `"<command-message>review is running</command-message>\n<command-name>/review</command-name>\n<command-args>main.go</command-args>"`)
	tr := loadText(t, sid+".jsonl", text, Claude)
	if got := head(t, tr, 3).PositionBefore("look at this"); got != 2 {
		t.Errorf("position before a prompt with an image = %d, want 2", got)
	}
	if got := tr.PositionBefore("/review main.go"); got != 4 {
		t.Errorf("position before a slash command = %d, want 4", got)
	}
}

// A server tool's use and its result come in one assistant message: the
// call is closed there, so cuts after it are clean.
func TestClaudeServerToolUseCloses(t *testing.T) {
	u := func(n string) string { return "0000000" + n + "-0000-4000-8000-000000000000" }
	text := claudeLineJSON(u("1"), "", "user", `"search the web"`) +
		claudeLineJSON(u("2"), u("1"), "assistant", `[{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[]},{"type":"text","text":"found"}]`) +
		claudeLineJSON(u("3"), u("2"), "user", `"thanks"`)
	tr := loadText(t, sid+".jsonl", text, Claude)
	if !tr.Clean(2) || !tr.Clean(3) {
		t.Error("a server tool call with its result in the same message leaves the cut unclean")
	}
}

// Summarize modes: summarize-up-to never copies a call still open at the
// end of a live transcript into the child; summarize-from never hangs a
// kept line under the summary written after it; lines_kept counts only
// the lines written.
func TestSummarizeModesEdges(t *testing.T) {
	u := func(n string) string { return "0000000" + n + "-0000-4000-8000-000000000000" }
	text := claudeLineJSON(u("1"), "", "user", `"first"`) +
		claudeLineJSON(u("2"), u("1"), "assistant", `[{"type":"text","text":"ok"}]`) +
		`{"type":"summary","summary":"s","leafUuid":"` + u("4") + `"}` + "\n" +
		claudeLineJSON(u("3"), u("2"), "user", `"second"`) +
		claudeLineJSON(u("4"), u("3"), "assistant", `[{"type":"tool_use","id":"toolu_live","name":"Bash","input":{}}]`)
	tr := loadText(t, sid+".jsonl", text, Claude)

	f, err := tr.Fork(3, ForkOptions{Mode: ModeSummarizeUpTo, Summary: "earlier", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(f.data, []byte("toolu_live")) {
		t.Errorf("summarize-up-to copied the open call:\n%s", f.data)
	}

	// A kept line whose parent is after the cut (an out-of-order line).
	text2 := claudeLineJSON(u("1"), "", "user", `"first"`) +
		claudeLineJSON(u("2"), u("5"), "assistant", `[{"type":"text","text":"late parent"}]`) +
		claudeLineJSON(u("5"), u("1"), "user", `"second"`)
	tr2 := loadText(t, sid+".jsonl", text2, Claude)
	f2, err := tr2.Fork(2, ForkOptions{Mode: ModeSummarizeFrom, Summary: "later", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(f2.data), []byte("\n"))
	var sum struct {
		UUID string `json:"uuid"`
	}
	json.Unmarshal(lines[len(lines)-1], &sum)
	if bytes.Contains(lines[1], []byte(`"parentUuid":"`+sum.UUID+`"`)) {
		t.Errorf("summarize-from hung a line under the summary written after it:\n%s", f2.data)
	}

	// The summary line refers to a dropped entry and goes: not "kept".
	f3, err := tr.Fork(3, ForkOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if written := bytes.Count(f3.data, []byte("\n")); f3.Kept != written || f3.Kept+f3.Dropped != len(tr.Lines) {
		t.Errorf("lines_kept %d, dropped %d; %d lines written of %d", f3.Kept, f3.Dropped, written, len(tr.Lines))
	}
}
