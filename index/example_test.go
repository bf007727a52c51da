package index_test

import (
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

// A window's records: the pre-image of main.go (its lazy baseline) and
// the post-image the window left. The state before the window is what it
// found; the state after, what it wrote.
func ExampleStateAt() {
	t := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	file := func(hash string, size int64) *index.State {
		return &index.State{Hash: index.Hash(hash), Size: size, Mode: 0o644, Type: index.TypeFile}
	}
	recs := []index.Record{
		{V: index.Version, Seq: 1, Time: t, Kind: index.KindOpen, Window: "toolu_1", Tool: "Bash"},
		{V: index.Version, Seq: 2, Time: t, Kind: index.KindBefore, Window: "toolu_1", Path: "main.go", State: file("aa", 12)},
		{V: index.Version, Seq: 3, Time: t, Kind: index.KindAfter, Window: "toolu_1", Path: "main.go", State: file("bb", 13)},
		{V: index.Version, Seq: 4, Time: t, Kind: index.KindClose, Window: "toolu_1"},
	}
	before := index.StateAt(recs, 1)["main.go"]
	after := index.StateAt(recs, 4)["main.go"]
	fmt.Println(before.Hash, before.Size, before.Baseline)
	fmt.Println(after.Hash, after.Size, after.Kind)
	// Output:
	// aa 12 true
	// bb 13 after
}
