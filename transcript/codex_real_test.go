package transcript

import (
	"bytes"
	"os"
	"testing"
)

// The rollout the real Codex CLI (0.169.0) wrote for the two-turn session
// of the integration test (integration/realcodex_test.go, kept with
// CKFS_KEEP_TRANSCRIPT; its temporary paths replaced): its session_meta
// carries the id twice (payload.id and payload.session_id), calls pair
// with their outputs, and a fork before the second turn keeps the first
// turn only and names only the child.
func TestRealCodexRollout(t *testing.T) {
	tr, orig := load(t, "codex-real-0.169.0.jsonl", Codex)
	if len(tr.Lines) != 38 || tr.SessionID != "01a23aac-c3e2-7fc3-9cf8-6678eead015b" {
		t.Fatalf("%d lines, session %q", len(tr.Lines), tr.SessionID)
	}
	if tr.Clean(12) || tr.Clean(29) {
		t.Error("a cut between a call and its output is clean")
	}
	if !tr.Clean(15) || !tr.Clean(22) {
		t.Error("a cut after a call's output is not clean")
	}
	child := "01a23aac-0000-7000-8000-000000000009"
	f, err := tr.Fork(22, ForkOptions{Child: child, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(f.data, []byte("Turn one")) || bytes.Contains(f.data, []byte("Turn two")) {
		t.Error("the fork before turn two does not hold exactly turn one")
	}
	first, _, _ := bytes.Cut(f.data, []byte("\n"))
	if bytes.Contains(first, []byte(tr.SessionID)) || bytes.Count(first, []byte(child)) != 2 {
		t.Errorf("the fork's session_meta: %s", first)
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tr.Path); !bytes.Equal(b, orig) {
		t.Error("the original rollout changed")
	}
}
