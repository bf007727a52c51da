package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/minio/minio-go/v7"
)

// CollectOptions are one collection of a shared bucket.
type CollectOptions struct {
	// Policy is each workspace's retention (keep the last N checkpoints,
	// an age); MaxSize is not used.
	Policy gc.Policy
	// DropAfter removes whole workspaces not pushed to for this long
	// (0: none).
	DropAfter time.Duration
	DryRun    bool
}

// CollectResult is what a collection found and did.
type CollectResult struct {
	Workspaces int               `json:"workspaces"`
	Dropped    []string          `json:"dropped,omitempty"`    // workspaces removed whole
	Watermarks map[string]uint64 `json:"watermarks,omitempty"` // workspaces whose watermark moved (would move, in a dry run): the new one
	Objects    int               `json:"objects"`
	Live       int               `json:"live_objects"`
	Deleted    int               `json:"deleted_objects"` // would be, in a dry run
	Freed      int64             `json:"freed_bytes"`
	KeptYoung  int               `json:"kept_young"` // named by no head, but younger than the grace period
	DryRun     bool              `json:"dry_run"`
}

const lockKey = "gc.lock"

// lockFile is gc.lock: who collects, until when.
type lockFile struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// Collect applies each workspace's retention and deletes every object no
// kept checkpoint of any workspace needs, by mark and sweep: it takes the
// bucket's lock object, reads every head (moving watermarks with
// conditional writes), marks what the kept checkpoints, baselines,
// segments and logs need, and deletes only unmarked objects older than
// the grace period. It is safe while agents push (see Grace).
func Collect(ctx context.Context, b *Bucket, o CollectOptions) (*CollectResult, error) {
	grace := Grace()
	start := time.Now()
	res := &CollectResult{DryRun: o.DryRun, Watermarks: map[string]uint64{}}
	if !o.DryRun {
		release, err := b.lock(ctx, grace)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	ids, err := b.dirs(ctx, "workspaces/")
	if err != nil {
		return nil, err
	}
	live := map[cas.Hash]bool{}
	for _, id := range ids {
		if !ValidWorkspace(id) {
			continue
		}
		if err := b.collectWorkspace(ctx, id, o, start, res, live); err != nil {
			return nil, fmt.Errorf("workspace %s: %w (nothing was deleted)", id, err)
		}
	}
	res.Live = len(live)
	for o2 := range b.c.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: b.prefix + "objects/", Recursive: true}) {
		if o2.Err != nil {
			return nil, b.wrap("objects/", o2.Err)
		}
		name := o2.Key[strings.LastIndexByte(o2.Key, '/')+1:]
		h, err := cas.ParseHash("blake3:" + name)
		if err != nil || o2.Key != b.prefix+objectKey(h) {
			continue // not an object of ckfs's
		}
		res.Objects++
		switch {
		case live[h]:
		case time.Since(o2.LastModified) < grace:
			res.KeptYoung++
		default:
			if !o.DryRun {
				if time.Since(start) > grace/3 {
					return res, fmt.Errorf("the collection took longer than a third of the grace period (%s) and stopped; run it again", grace)
				}
				if err := b.remove(ctx, o2.Key[len(b.prefix):]); err != nil {
					return res, err
				}
			}
			res.Deleted++
			res.Freed += o2.Size
		}
	}
	return res, nil
}

// collectWorkspace applies the retention to one workspace and marks what
// it keeps.
func (b *Bucket) collectWorkspace(ctx context.Context, id string, o CollectOptions, now time.Time, res *CollectResult, live map[cas.Hash]bool) error {
	head, etag, err := b.readHead(ctx, id)
	if err != nil || head == nil {
		return err
	}
	res.Workspaces++
	if !head.Dropped.IsZero() {
		return nil // a tombstone names nothing
	}
	if o.DropAfter > 0 && now.Sub(head.Updated) > o.DropAfter {
		if !o.DryRun {
			tomb := &Head{Version: HeadVersion, Workspace: id, Root: head.Root, Host: head.Host, Created: head.Created, Updated: head.Updated, Dropped: now.UTC()}
			err := b.writeHead(ctx, tomb, etag)
			if errors.Is(err, errChanged) {
				// A push wrote the head meanwhile: the workspace is
				// alive; keep it whole this round.
				return b.collectWorkspace(ctx, id, CollectOptions{DryRun: o.DryRun}, now, res, live)
			}
			if err != nil {
				return err
			}
		}
		res.Dropped = append(res.Dropped, id)
		return nil
	}
	_, recs, err := Timeline(ctx, b, id)
	if err != nil {
		return err
	}
	d := gc.Decide(recs, o.Policy, nil, now)
	w := max(d.Watermark, head.Watermark)
	if w > head.Watermark && o.DryRun {
		res.Watermarks[id] = w
	}
	if w > head.Watermark && !o.DryRun {
		head.Watermark = w
		if err := b.writeHead(ctx, head, etag); errors.Is(err, errChanged) {
			// A push won: keep everything this round.
			w = 0
		} else if err != nil {
			return err
		} else {
			res.Watermarks[id] = w
		}
	}
	for h := range index.Live(recs, w) {
		if a, err := cas.ParseHash(string(h)); err == nil {
			live[a] = true
		}
	}
	// The newest head's blobs: a push may have added some since.
	head, _, err = b.readHead(ctx, id)
	if err != nil || head == nil {
		return err
	}
	for _, s := range head.Timeline {
		live[s.Object] = true
	}
	for _, f := range head.Files {
		live[f] = true
	}
	if head.Baseline != nil {
		live[head.Baseline.Object] = true
		data, err := b.getObject(ctx, head.Baseline.Object)
		if err != nil {
			return err
		}
		es, err := ParseBaseline(data)
		if err != nil {
			return err
		}
		for _, e := range es {
			if a, err := cas.ParseHash(string(e.Hash)); err == nil {
				live[a] = true
			}
		}
	}
	return nil
}

// lock takes the bucket's collection lock for grace/3 (a collection that
// runs longer stops), taking over one that has expired. release drops it.
func (b *Bucket) lock(ctx context.Context, grace time.Duration) (release func(), err error) {
	host, _ := os.Hostname()
	mine := lockFile{Holder: fmt.Sprintf("%s pid %d", host, os.Getpid()), Expires: time.Now().Add(grace / 3).UTC()}
	data, _ := json.Marshal(mine)
	_, err = b.put(ctx, lockKey, data, putOptions{ifNone: true})
	if errors.Is(err, errChanged) {
		old, etag, gerr := b.get(ctx, lockKey, maxGetLock)
		if gerr != nil {
			return nil, gerr
		}
		var l lockFile
		if json.Unmarshal(old, &l) == nil && time.Now().Before(l.Expires) {
			return nil, workspace.Errorf(workspace.ErrBusy, "%s is being collected by %s until %s; nothing was done", b, l.Holder, l.Expires.Local().Format(time.DateTime))
		}
		_, err = b.put(ctx, lockKey, data, putOptions{ifMatch: etag})
		if errors.Is(err, errChanged) {
			return nil, workspace.Errorf(workspace.ErrBusy, "another collection of %s took the lock first; nothing was done", b)
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { b.remove(context.Background(), lockKey) }, nil
}
