package fusefs

import (
	"os"
	"path/filepath"
	"testing"
)

// journalOf writes records through a nodeJournal and returns the bytes.
func journalOf(t testing.TB, write func(j *nodeJournal)) []byte {
	path := filepath.Join(t.TempDir(), "nodes.journal")
	f, err := OpenNodeJournal(path, true)
	if err != nil {
		t.Fatal(err)
	}
	write(&nodeJournal{f: f})
	f.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The journal replays into what the kernel holds: counts of handouts,
// the last name of a moved node, unreachable and forgotten nodes; a torn
// last record is ignored.
func TestNodeJournalReplay(t *testing.T) {
	b := journalOf(t, func(j *nodeJournal) {
		j.add('L', 10, 1, 0o40000, 1, "src")
		j.add('L', 11, 10, 0o100000, 1, "a.go")
		j.add('L', 11, 10, 0o100000, 1, "a.go")
		j.add('M', 11, 1, 0o100000, 0, "b.go")
		j.add('L', 12, 10, 0o100000, 1, "gone.go")
		j.add('U', 12, 0, 0, 0, "")
		j.add('L', 13, 10, 0o100000, 1, "old.go")
		j.add('F', 13, 0, 0, 0, "")
		j.add('S', 14, 10, 0o100000, 5, "set.go")
	})
	full := readNodeJournal(append(b, 'L', 1, 2)) // a torn record after
	want := map[uint64]jnode{
		10: {parent: 1, name: "src", count: 1},
		11: {parent: 1, name: "b.go", count: 2},
		12: {parent: 10, name: "gone.go", count: 1, gone: true},
		13: {parent: 10, name: "old.go", count: 0},
		14: {parent: 10, name: "set.go", count: 5},
	}
	if len(full) != len(want) {
		t.Fatalf("%d nodes, want %d", len(full), len(want))
	}
	for id, w := range want {
		g := full[id]
		if g == nil || g.parent != w.parent || g.name != w.name || g.count != w.count || g.gone != w.gone {
			t.Errorf("node %d = %+v, want %+v", id, g, w)
		}
	}
	if d := depth(full, 14); d != 3 {
		t.Errorf("depth of a file in src = %d, want 3", d)
	}
	if d := depth(full, 12); d != 0 {
		t.Errorf("depth of an unreachable node = %d, want 0", d)
	}
	// A cycle (a journal damaged, or renames seen out of order) reaches
	// no root.
	cyc := readNodeJournal(journalOf(t, func(j *nodeJournal) {
		j.add('L', 20, 21, 0o40000, 1, "a")
		j.add('L', 21, 20, 0o40000, 1, "b")
	}))
	if d := depth(cyc, 20); d != 0 {
		t.Errorf("depth in a cycle = %d, want 0", d)
	}
}

func FuzzNodeJournal(f *testing.F) {
	f.Add(journalOf(f, func(j *nodeJournal) {
		j.add('L', 10, 1, 0o40000, 1, "src")
		j.add('M', 10, 1, 0o40000, 0, "dst")
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		nodes := readNodeJournal(b)
		for id := range nodes {
			if d := depth(nodes, id); d < 0 {
				t.Fatalf("depth %d", d)
			}
		}
	})
}
