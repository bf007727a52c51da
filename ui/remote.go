package ui

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/internal/english"
	"github.com/ckfs-dev/ckfs/remote"
)

// Push prints what a push shipped to the bucket.
func Push(out io.Writer, bucket string, r *remote.PushResult) {
	if r.Records == 0 && r.Uploaded == 0 && r.Files == 0 && r.Baseline == 0 {
		fmt.Fprintf(out, "workspace %s in %s: up to date (seq %d)\n", r.Workspace, bucket, r.LastSeq)
		return
	}
	fmt.Fprintf(out, "workspace %s in %s: up to seq %d (%d new %s)\n", r.Workspace, bucket, r.LastSeq, r.Records, english.Noun(r.Records, "record", "records"))
	there := max(0, r.Objects+r.Baseline-r.Uploaded)
	fmt.Fprintf(out, "uploaded %s (%s); %d %s there already\n", english.Count(r.Uploaded, "object", "objects"), english.Size(r.UploadedBytes), there, english.Noun(there, "was", "were"))
	if r.Baseline > 0 {
		fmt.Fprintf(out, "baseline: %s\n", english.Count(r.Baseline, "path", "paths"))
	}
	if r.Missing > 0 || r.Damaged > 0 {
		fmt.Fprintf(out, "not uploaded: %d objects collected from the local store and %d damaged (ckfs verify): checkpoints that need them cannot be restored from the remote\n", r.Missing, r.Damaged)
	}
}

// Workspaces lists the workspaces a bucket holds; err is the listing's
// error (a partial list is printed, but never as "no workspaces").
func Workspaces(out io.Writer, bucket string, hs []*remote.Head, err error) {
	for _, h := range hs {
		fmt.Fprintf(out, "%s  %s  seq %d  %s:%s\n", h.Workspace, h.Updated.Local().Format(time.DateTime), h.LastSeq, h.Host, h.Root)
	}
	if len(hs) == 0 && err == nil {
		fmt.Fprintf(out, "no workspaces in %s\n", bucket)
	}
}

// Restore prints what a restore wrote.
func Restore(out io.Writer, res *remote.RestoreResult, took time.Duration) {
	fmt.Fprintf(out, "restored checkpoint %d of workspace %s into %s: %d %s, %d %s, %d %s, %s, in %.1fs\n",
		res.Checkpoint, res.Workspace, res.Dir, res.Files, english.Noun(res.Files, "file", "files"), res.Links, english.Noun(res.Links, "symlink", "symlinks"),
		res.Dirs, english.Noun(res.Dirs, "directory", "directories"), english.Size(res.Bytes), took.Seconds())
	for _, l := range res.Left {
		fmt.Fprintf(out, "  not restored: %s\n", l)
	}
}

// RemoteGC prints what a collection of a shared bucket did, or would do.
func RemoteGC(out io.Writer, bucket string, res *remote.CollectResult, p gc.Policy, dropAfter string) {
	verb, freed := "deleted", "freed"
	if res.DryRun {
		verb, freed = "would delete", "would free"
	}
	fmt.Fprintf(out, "%s: %d %s, retention per workspace: %s\n", bucket, res.Workspaces, english.Noun(res.Workspaces, "workspace", "workspaces"), p)
	for _, id := range res.Dropped {
		fmt.Fprintf(out, "dropped workspace %s (not pushed to for %s)\n", id, dropAfter)
	}
	for _, id := range slices.Sorted(maps.Keys(res.Watermarks)) {
		fmt.Fprintf(out, "workspace %s: checkpoints from %d on %s restorable\n", id, res.Watermarks[id], map[bool]string{true: "would stay", false: "stay"}[res.DryRun])
	}
	fmt.Fprintf(out, "%s %d of %s, %s %s; %d needed, %d younger than the grace period kept\n", verb, res.Deleted, english.Count(res.Objects, "object", "objects"), freed, english.Size(res.Freed), res.Live, res.KeptYoung)
}
