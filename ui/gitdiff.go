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
		fmt.Fprintf(out, "# %s: content not stored (%s)\n", p, notStored(d.Unknown))
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
	var rows []statRow
	for _, d := range diffs {
		a, r, binary := rewind.LineCounts(d.FromData, d.ToData)
		row := statRow{path: index.Display(d.Path), added: a, removed: r}
		switch {
		case d.Unknown != "":
			row.note = "content not stored"
		case binary:
			row.note = fmt.Sprintf("Bin %s -> %s", english.Size(int64(len(d.FromData))), english.Size(int64(len(d.ToData))))
		}
		rows = append(rows, row)
	}
	writeStat(out, "", rows, 0, "")
}

// statRow is one path of a --stat: its added and removed lines, or a note
// in their place.
type statRow struct {
	path           string
	added, removed int
	note           string
}

// writeStat prints rows as git's --stat does, each line after pre: at most
// limit of them (0: all), then how many more and more (how to see them),
// then the totals.
func writeStat(out io.Writer, pre string, rows []statRow, limit int, more string) {
	shown := rows
	if limit > 0 && len(rows) > limit {
		shown = rows[:limit]
	}
	width := 0
	for _, r := range shown {
		width = max(width, len(r.path))
	}
	added, removed := 0, 0
	for _, r := range rows {
		added, removed = added+r.added, removed+r.removed
	}
	for _, r := range shown {
		if r.note != "" {
			fmt.Fprintf(out, "%s %-*s | %s\n", pre, width, r.path, r.note)
			continue
		}
		fmt.Fprintf(out, "%s %-*s | %d %s\n", pre, width, r.path, r.added+r.removed, strings.Repeat("+", min(r.added, 40))+strings.Repeat("-", min(r.removed, 40)))
	}
	if n := len(rows) - len(shown); n > 0 {
		fmt.Fprintf(out, "%s … and %s (%s)\n", pre, english.Count(n, "more file", "more files"), more)
	}
	fmt.Fprintf(out, "%s %s changed, %s(+), %s(-)\n", pre, english.Count(len(rows), "file", "files"), english.Count(added, "insertion", "insertions"), english.Count(removed, "deletion", "deletions"))
}
