package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
)

// GitDiff prints one path's change in git's form (diff --git, a/ and b/
// names, /dev/null for a side where the file is absent, mode lines), so
// that git apply takes it. What git cannot apply (content ckfs did not
// store, a directory, a binary file) is said in a line of its own.
func GitDiff(out io.Writer, d workspace.FileDiff) {
	p := index.Display(d.Path)
	from, to := d.From, d.To
	switch {
	case d.Unknown != "":
		fmt.Fprintf(out, "# %s: content not stored (%s)\n", p, d.Unknown)
		return
	case from.Type == index.TypeDir || to.Type == index.TypeDir:
		if from.Type != to.Type {
			fmt.Fprintf(out, "# %s: %s, then %s\n", p, from.Type, to.Type)
		}
		return
	}
	a, b := "a/"+p, "b/"+p
	fmt.Fprintf(out, "diff --git %s %s\n", a, b)
	switch {
	case !from.Exists():
		fmt.Fprintf(out, "new file mode %s\n", gitMode(to))
		a = "/dev/null"
	case !to.Exists():
		fmt.Fprintf(out, "deleted file mode %s\n", gitMode(from))
		b = "/dev/null"
	case gitMode(from) != gitMode(to):
		fmt.Fprintf(out, "old mode %s\nnew mode %s\n", gitMode(from), gitMode(to))
	}
	if string(d.FromData) == string(d.ToData) {
		return
	}
	if rewind.IsBinary(d.FromData) || rewind.IsBinary(d.ToData) {
		fmt.Fprintf(out, "Binary files %s and %s differ\n", a, b)
		return
	}
	fmt.Fprint(out, ColorDiff(udiff.Unified(a, b, string(d.FromData), string(d.ToData))))
}

// gitMode is a state's mode as git writes it.
func gitMode(s index.State) string {
	switch {
	case s.Type == index.TypeSymlink:
		return "120000"
	case s.Mode&0o111 != 0:
		return "100755"
	}
	return "100644"
}

// DiffStat prints git's --stat: a line a path with its added and removed
// lines, then the totals.
func DiffStat(out io.Writer, diffs []workspace.FileDiff) {
	width := 0
	for _, d := range diffs {
		width = max(width, len(index.Display(d.Path)))
	}
	added, removed := 0, 0
	for _, d := range diffs {
		a, r, binary := rewind.LineCounts(d.FromData, d.ToData)
		p := index.Display(d.Path)
		switch {
		case d.Unknown != "":
			fmt.Fprintf(out, " %-*s | content not stored\n", width, p)
		case binary:
			fmt.Fprintf(out, " %-*s | Bin %d -> %d bytes\n", width, p, len(d.FromData), len(d.ToData))
		default:
			fmt.Fprintf(out, " %-*s | %d %s\n", width, p, a+r, strings.Repeat("+", min(a, 40))+strings.Repeat("-", min(r, 40)))
		}
		added, removed = added+a, removed+r
	}
	fmt.Fprintf(out, " %d %s changed, %d %s(+), %d %s(-)\n", len(diffs), english.Noun(len(diffs), "file", "files"), added, english.Noun(added, "insertion", "insertions"), removed, english.Noun(removed, "deletion", "deletions"))
}
