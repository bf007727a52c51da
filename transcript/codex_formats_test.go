package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadText(t *testing.T, name, text, agent string) *Transcript {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(p, agent)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Newer Codex versions repeat the session id as payload.session_id in the
// first line; a fork must carry its own id in both places, or the resumed
// fork reports (and files its turns under) the parent's id.
func TestCodexForkRewritesSessionIDEverywhere(t *testing.T) {
	parent := "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	child := "0199ffff-0000-7000-8000-000000000002"
	text := `{"timestamp":"2026-12-02T10:00:00.000Z","type":"session_meta","payload":{"id":"` + parent + `","session_id":"` + parent + `","cwd":"/w","cli_version":"0.169.0"}}
{"timestamp":"2026-12-02T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}
`
	tr := loadText(t, "rollout-2026-12-02T10-00-00-"+parent+".jsonl", text, Codex)
	f, err := tr.Fork(2, ForkOptions{Child: child, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(f.data), "\n")
	if strings.Contains(first, parent) || strings.Count(first, child) != 2 {
		t.Fatalf("fork's first line: %s", first)
	}
}

// Rollouts from before session_meta (a bare first line with the id, then
// unwrapped response items, and state lines) load and fork; a
// local_shell_call with a null call_id pairs with nothing instead of
// failing the load.
func TestCodexOldFormatAndNullCallID(t *testing.T) {
	id := "0188aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
	text := `{"id":"` + id + `","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}
{"type":"local_shell_call","id":"lsc_1","call_id":null,"status":"completed","action":{"type":"exec","command":["ls"]}}
{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}
{"type":"function_call_output","call_id":"call_1","output":"ok"}
`
	tr := loadText(t, "rollout-2025-05-01T10-00-00-"+id+".jsonl", text, Codex)
	if tr.SessionID != id || len(tr.Lines) != 6 {
		t.Fatalf("session %q, %d lines", tr.SessionID, len(tr.Lines))
	}
	if tr.Clean(5) {
		t.Error("a cut between call_1 and its output is clean")
	}
	if !tr.Clean(4) || !tr.Clean(6) {
		t.Error("cuts around the null call_id are not clean")
	}
	f, err := tr.Fork(4, ForkOptions{Child: "0188ffff-0000-7000-8000-000000000003", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := bytes.Cut(f.data, []byte("\n")); !bytes.Contains(first, []byte(`"id":"0188ffff-0000-7000-8000-000000000003"`)) {
		t.Errorf("old-format fork's first line: %s", first)
	}
}
