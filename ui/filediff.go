package ui

import (
	"fmt"
	"io"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
)

// FileDiff prints one path's change between the checkpoints labelled la
// and lb: a type change in words, then the coloured unified diff.
func FileDiff(out io.Writer, d workspace.FileDiff, la, lb string) {
	p, sa, sb := d.Path, d.From, d.To
	switch {
	case d.Unknown != "" && d.Disk:
		fmt.Fprintf(out, "%s: content at %s not stored (%s)\n", index.Display(p), la, notStored(d.Unknown))
		return
	case d.Unknown != "":
		fmt.Fprintf(out, "%s: content not stored (%s)\n", index.Display(p), notStored(d.Unknown))
		return
	case sa.Type != sb.Type && (sa.Type == index.TypeDir || sb.Type == index.TypeDir):
		fmt.Fprintf(out, "%s: %s at %s, %s at %s\n", index.Display(p), sa.Type, la, sb.Type, lb)
		return
	case sa.Type != sb.Type && sa.Type != index.TypeAbsent && sb.Type != index.TypeAbsent:
		fmt.Fprintf(out, "%s: %s at %s, %s at %s\n", index.Display(p), sa.Type, la, sb.Type, lb)
	}
	fmt.Fprint(out, ColorDiff(rewind.UnifiedDiff(index.Display(p), la, lb, d.FromData, d.ToData)))
}
