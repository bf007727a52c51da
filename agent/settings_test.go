package agent_test

import (
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/ckfs-dev/ckfs/agent"
	"github.com/google/go-cmp/cmp"
)

// The hooks handed to codex with -c are TOML that decodes to exactly the
// hooks.json that ckfs hooks print codex writes.
func TestCodexHooksAsTOML(t *testing.T) {
	hooks := agent.Must("codex").HookSettings("/opt/my tools/ckfs \"x\"")["hooks"]
	var got map[string]any
	if _, err := toml.Decode("hooks="+agent.TOMLInline(hooks), &got); err != nil {
		t.Fatalf("%v\n%s", err, agent.TOMLInline(hooks))
	}
	want := map[string]any{}
	for ev, groups := range hooks.(map[string]any) {
		var gs []any
		for _, g := range groups.([]map[string]any) {
			m := map[string]any{}
			for k, v := range g {
				m[k] = v
			}
			var hs []any
			for _, h := range g["hooks"].([]any) {
				hm := map[string]any{}
				for k, v := range h.(map[string]any) {
					if n, ok := v.(int); ok {
						v = int64(n)
					}
					hm[k] = v
				}
				hs = append(hs, hm)
			}
			m["hooks"] = hs
			gs = append(gs, m)
		}
		want[ev] = gs
	}
	if d := cmp.Diff(map[string]any{"hooks": want}, got); d != "" {
		t.Errorf("TOML hooks differ from the JSON ones (-want +got):\n%s", d)
	}
}
