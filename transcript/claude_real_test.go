package transcript

import (
	"bytes"
	"os"
	"testing"
)

// The transcript the real Claude Code CLI (2.1.332) wrote for the
// three-turn session of the integration test (integration/realclaude_test.go,
// kept with CKFS_KEEP_TRANSCRIPT; its temporary paths replaced): its many
// bookkeeping lines (queue-operation, attachment, api-request, tools-used,
// last-prompt, cost-state, mode, …) load, tool calls pair with their
// results, and a fork before the second turn keeps the first turn only.
func TestRealClaudeTranscript(t *testing.T) {
	tr, orig := load(t, "claude-real-2.1.332.jsonl", Claude)
	if len(tr.Lines) != 60 || tr.SessionID == "" {
		t.Fatalf("%d lines, session %q", len(tr.Lines), tr.SessionID)
	}
	if tr.Clean(20) {
		t.Error("a cut between toolu_01Sed and its result is clean")
	}
	if tr.Clean(40) || tr.Clean(41) {
		t.Error("a cut between the parallel calls and their results is clean")
	}
	for _, n := range []int{23, 32, 48} {
		if !tr.Clean(n) {
			t.Errorf("cut after line %d is not clean", n)
		}
	}
	f, err := tr.Fork(32, ForkOptions{Child: "0a0a0a0a-0000-4000-8000-000000000001", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(f.data, []byte("Turn one")) || bytes.Contains(f.data, []byte("Turn two")) {
		t.Error("the fork before turn two does not hold exactly turn one")
	}
	if bytes.Contains(f.data, []byte(tr.SessionID)) {
		t.Error("the fork still names the parent session")
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tr.Path); !bytes.Equal(b, orig) {
		t.Error("the original transcript changed")
	}
}
