package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/verify"
)

// GC prints what a local collection did, or would do.
func GC(out io.Writer, r *gc.Result) {
	verb, freed := "deleted", "freed"
	if r.DryRun {
		verb, freed = "would delete", "would free"
	}
	fmt.Fprintf(out, "policy: %s\n", r.Policy)
	switch {
	case r.Missing > 0 || r.Damaged > 0:
		fmt.Fprintf(out, "checkpoints from %d on are kept, but not all can be restored: %s they need %s missing and %d %s damaged; run ckfs verify (--repair recovers what it can)\n", max(r.Watermark, 1), english.Count(r.Missing, "object", "objects"), english.Noun(r.Missing, "is", "are"), r.Damaged, english.Noun(r.Damaged, "is", "are"))
	case r.Watermark == 0:
		fmt.Fprintf(out, "%s restorable\n", map[bool]string{true: "the checkpoint stays", false: fmt.Sprintf("all %d checkpoints stay", r.Checkpoints)}[r.Checkpoints == 1])
	case r.Watermark > r.Previous:
		fmt.Fprintf(out, "checkpoints from %d on stay restorable (%d of %d): %s\n", r.Watermark, r.Restorable, r.Checkpoints, strings.Join(r.Reasons, "; "))
	default:
		fmt.Fprintf(out, "checkpoints from %d on stay restorable (%d of %d), as before\n", r.Watermark, r.Restorable, r.Checkpoints)
	}
	for _, why := range r.Reasons {
		if strings.HasPrefix(why, "held back: ") && r.Watermark <= r.Previous {
			fmt.Fprintln(out, why)
		}
	}
	fmt.Fprintf(out, "%s %d of %s, %s %s; %s (%s) kept\n", verb, r.Deleted, english.Count(r.Objects, "object", "objects"), freed,
		english.Size(r.Freed), english.Count(r.Live, "object", "objects"), english.Size(r.Needed))
	if r.KeptRecent > 0 {
		fmt.Fprintf(out, "kept %s stored while collecting\n", english.Count(r.KeptRecent, "object", "objects"))
	}
	if r.TempsRemoved > 0 {
		fmt.Fprintf(out, "removed %s left by a crash\n", english.Count(r.TempsRemoved, "temp file", "temp files"))
	}
}

// DU prints what a store holds.
func DU(out io.Writer, u *gc.Usage) {
	sz := config.FormatSize
	fmt.Fprintf(out, "store %s\n", u.Store)
	fmt.Fprintf(out, "  %s in %s (%s of content, compression %.1fx) + %s timeline (%s)\n",
		sz(u.StoredBytes), english.Count(u.Objects, "object", "objects"), sz(u.ContentBytes), u.CompressionRatio, sz(u.TimelineBytes), english.Count(u.Records, "record", "records"))
	fmt.Fprintf(out, "  a full copy at every image would take %s: dedup %.1fx, store is %.1fx smaller\n",
		sz(u.FullCopyBytes), u.DedupRatio, u.SavingRatio)
	if u.Watermark > 0 {
		fmt.Fprintf(out, "  checkpoints before %d were collected (ckfs gc)\n", u.Watermark)
	}
	if len(u.Windows) > 0 {
		fmt.Fprintln(out, "largest windows (new content they stored):")
		for _, w := range u.Windows {
			fmt.Fprintf(out, "  %10s  %4d %-8s %s\n", sz(w.StoredBytes), w.Objects, english.Noun(w.Objects, "object", "objects"), strings.TrimSpace(w.ID+" "+w.Tool))
		}
	}
	if len(u.Sessions) > 0 {
		fmt.Fprintln(out, "per agent session:")
		for _, s := range u.Sessions {
			fmt.Fprintf(out, "  %10s  %4d %-8s %s\n", sz(s.StoredBytes), s.Objects, english.Noun(s.Objects, "object", "objects"), s.ID)
		}
	}
	if len(u.Files) > 0 {
		fmt.Fprintln(out, "largest files (all their stored versions):")
		for _, f := range u.Files {
			fmt.Fprintf(out, "  %10s  %4d %-9s %s\n", sz(f.StoredBytes), f.Versions, english.Noun(f.Versions, "version", "versions"), f.Path)
		}
	}
}

// Verify prints what a verify found, and repaired.
func Verify(out io.Writer, r *verify.Report) {
	fmt.Fprintf(out, "store %s: %s (%s), %s\n", r.Store, english.Count(r.Objects, "object", "objects"), english.Size(r.Bytes), english.Count(r.Records, "record", "records"))
	list := func(what string, items []string) {
		for _, i := range items {
			fmt.Fprintf(out, "  %s: %s\n", what, i)
		}
	}
	list("corrupt object", r.Corrupt)
	list("damaged pack (its objects are missing)", r.DamagedPacks)
	list("missing object", r.Missing)
	if r.Tail != "" {
		fmt.Fprintf(out, "  timeline: %s\n", r.Tail)
	}
	list("conversation log", r.ConvTails)
	list("orphan temp file", r.OrphanTemps)
	list("unfinished rewind (ckfs rewind --rollback or --abandon)", r.PendingJournals)
	if len(r.Unrestorable) > 0 {
		fmt.Fprintf(out, "  checkpoints no longer fully restorable: %v\n", r.Unrestorable)
	}
	list("repaired", r.Repaired)
	list("not repaired", r.Unrepaired)
	if r.Clean {
		fmt.Fprintln(out, "ok: every object verifies and every reference resolves")
	}
}
