package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Answered finds the calls with a result, in both agents' real transcripts,
// and not those without one (a call cut off mid-flight).
func TestAnswered(t *testing.T) {
	for _, tc := range []struct {
		file, agent string
		ids         []string
		want        map[string]bool
	}{
		{"codex-real-0.169.0.jsonl", Codex, []string{"call_01Sed", "call_02Notes", "call_never"}, map[string]bool{"call_01Sed": true, "call_02Notes": true}},
		{"claude-real-2.1.332.jsonl", Claude, []string{"toolu_01Sed", "toolu_02Write", "toolu_never"}, map[string]bool{"toolu_01Sed": true, "toolu_02Write": true}},
	} {
		got, err := Answered(filepath.Join("testdata", tc.file), tc.agent, tc.ids)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.file, d)
		}
	}
	// A call whose result line is not written yet is not answered.
	data, _ := os.ReadFile(filepath.Join("testdata", "codex-real-0.169.0.jsonl"))
	var kept []byte
	for line := range bytes.Lines(data) {
		if bytes.Contains(line, []byte(`"function_call_output"`)) && bytes.Contains(line, []byte("call_02Notes")) {
			break
		}
		kept = append(kept, line...)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	os.WriteFile(cut, kept, 0o644)
	if got, err := Answered(cut, Codex, []string{"call_01Sed", "call_02Notes"}); err != nil || got["call_02Notes"] || !got["call_01Sed"] {
		t.Errorf("before call_02Notes's output: %v, %v", got, err)
	}
	if _, err := Answered(filepath.Join(t.TempDir(), "missing.jsonl"), Codex, []string{"x"}); err == nil {
		t.Error("a missing transcript is not an error")
	}
}
