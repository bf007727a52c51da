package rewind

import (
	"testing"

	"github.com/ckfs-dev/ckfs/index"
)

// What a plan needs is the most it holds above what is there at any step:
// deletions come first, and a file is written beside the one it replaces
// before the rename frees that one.
func TestSpaceNeeded(t *testing.T) {
	file := func(size int64) index.State { return index.State{Type: index.TypeFile, Size: size} }
	absent := index.State{Type: index.TypeAbsent}
	const mib = 1 << 20
	for _, c := range []struct {
		name  string
		steps []Step
		want  int64
	}{
		{"a restore over a smaller file", []Step{{Path: "a", Actions: []Action{ActRestore}, Current: file(mib), Target: file(3 * mib)}}, 3 * mib},
		{"a deletion frees room first", []Step{
			{Path: "b", Actions: []Action{ActRecreate}, Current: absent, Target: file(3 * mib)},
			{Path: "z", Actions: []Action{ActDelete}, Current: file(5 * mib), Target: absent},
		}, 0},
		{"what a restore frees is there for the next", []Step{
			{Path: "a", Actions: []Action{ActRestore}, Current: file(2 * mib), Target: file(mib)},
			{Path: "b", Actions: []Action{ActRestore}, Current: file(mib), Target: file(2 * mib)},
		}, mib},
		{"blocks, not bytes", []Step{{Path: "a", Actions: []Action{ActRecreate}, Current: absent, Target: file(1)}}, 4096},
		{"only deletions", []Step{{Path: "a", Actions: []Action{ActDelete}, Current: file(mib), Target: absent}}, 0},
	} {
		got, names := spaceNeeded(&Plan{Steps: c.steps})
		if got != c.want {
			t.Errorf("%s: needs %d, want %d", c.name, got, c.want)
		}
		if c.want > 0 && len(names) == 0 {
			t.Errorf("%s: no file named", c.name)
		}
	}
}
