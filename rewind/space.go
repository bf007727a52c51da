package rewind

import (
	"cmp"
	"fmt"
	"os"
	"slices"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"golang.org/x/sys/unix"
)

const checkSpace = "space"

// spaceCheck refuses a plan whose writes do not fit on the workspace's
// file system: a rewind that ran out of space part way would leave the
// files partly rewound, for --rollback to put back. Deletions run first
// (Plan.Ordered), and each file is written beside the one it replaces
// before the rename that frees it, so what the plan needs is the most it
// holds above what is there now at any step.
func spaceCheck(p *Plan, d *Dir) Check {
	c := Check{Name: checkSpace, OK: true, Detail: "the files it writes fit on the workspace's file system"}
	need, written := spaceNeeded(p)
	if need == 0 {
		return c
	}
	free, err := d.Free()
	if err != nil {
		c.Warn, c.Detail = true, fmt.Sprintf("the free space of the workspace's file system is not known (%v)", err)
		return c
	}
	if need > free {
		c.OK = false
		c.Detail = fmt.Sprintf("the rewind needs up to %s more on the workspace's file system than it frees, and %s is free there: free space on it, or rewind fewer paths (-- PATH); the largest files it writes are",
			english.Size(need), english.Size(free))
		c.Paths = written
	}
	return c
}

// spaceNeeded returns the most the plan's actions hold on disk above what
// is there before it, in file system blocks, and the largest files it
// writes (at most five).
func spaceNeeded(p *Plan) (int64, []string) {
	var held, peak int64
	var written []PathAction
	for _, o := range p.Ordered() {
		switch o.Action {
		case ActDelete:
			held -= allocated(o.Current)
		case ActRestore, ActRecreate:
			peak = max(peak, held+allocated(o.Target))
			held += allocated(o.Target)
			if o.Action == ActRestore {
				held -= allocated(o.Current)
			}
			if o.Target.Type == index.TypeFile {
				written = append(written, o)
			}
		}
	}
	slices.SortStableFunc(written, func(a, b PathAction) int { return cmp.Compare(b.Target.Size, a.Target.Size) })
	var names []string
	for _, o := range written[:min(len(written), 5)] {
		names = append(names, o.Path)
	}
	return max(peak, 0), names
}

// allocated is what a file of state s takes on disk, in 4 KiB blocks.
func allocated(s index.State) int64 {
	if s.Type != index.TypeFile {
		return 0
	}
	return (s.Size + 4095) &^ 4095
}

// Free returns the space the directory's file system has free for this
// process: root may also write the blocks a file system keeps for it.
func (d *Dir) Free() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(d.fd, &st); err != nil {
		return 0, err
	}
	blocks := st.Bavail
	if os.Geteuid() == 0 {
		blocks = st.Bfree
	}
	return int64(blocks) * int64(st.Bsize), nil
}
