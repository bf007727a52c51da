package remote

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/workspace"
)

// PushOptions describe the workspace being pushed.
type PushOptions struct {
	Store     string // the local store
	Name      string // the remote's name in the store's remotes.json, where the push is recorded ("": not recorded)
	Workspace string // its id in the bucket
	Root      string // the workspace root
	Walk      string // the directory the baseline is read from (default Root)
	Host      string
	// Excluded and MaxFileSize are the capture's rules, which the baseline
	// follows.
	Excluded    func(rel string) bool
	MaxFileSize int64
	// Flush, if set, runs first: a daemon records the post-images of
	// files still being written (the CLI asks it over its socket; the
	// daemon's own uploader calls its recorder).
	Flush func() error
	// Progress, if set, is told of each object checked.
	Progress func(done, total int)
}

// PushResult says what a push did.
type PushResult struct {
	Workspace     string `json:"workspace"`
	Records       int    `json:"records"`        // new timeline records shipped
	LastSeq       uint64 `json:"last_seq"`       // the head's last seq after the push
	Objects       int    `json:"objects"`        // objects the new records and the baseline need
	Uploaded      int    `json:"uploaded"`       // of those, not in the bucket before
	UploadedBytes int64  `json:"uploaded_bytes"` // stored bytes uploaded
	Missing       int    `json:"missing"`        // needed but no longer in the local store (collected)
	Damaged       int    `json:"damaged"`        // needed but damaged in the local store (ckfs verify)
	Baseline      int    `json:"baseline"`       // paths in the baseline taken now (0: taken before)
	Files         int    `json:"files"`          // logs shipped (marks, session logs)
	Retries       int    `json:"retries"`        // head writes lost to another writer and redone
}

// Push ships to the bucket what the local store has and the bucket does
// not: the objects, the timeline since the last push as one segment, the
// baseline on the first push, and the logs; then it replaces the head with
// a conditional write. Everything before the head write is idempotent, so
// an interrupted push is completed by the next one, and two pushes at once
// never lose each other's records: the loser reads the new head and goes
// again.
func Push(ctx context.Context, b *Bucket, o PushOptions) (*PushResult, error) {
	if !ValidWorkspace(o.Workspace) {
		return nil, fmt.Errorf("bad workspace id %q", o.Workspace)
	}
	if o.Flush != nil {
		if err := o.Flush(); err != nil {
			return nil, fmt.Errorf("record the files still being written first: %w", err)
		}
	}
	local, err := cas.Open(o.Store, nil)
	if err != nil {
		return nil, err
	}
	var res *PushResult
	for attempt := 0; ; attempt++ {
		res = &PushResult{Workspace: o.Workspace, Retries: attempt}
		// Each attempt checks the bucket afresh: objects seen by an
		// attempt that took too long may have been collected since.
		up := &uploader{b: b, local: local, res: res, progress: o.Progress}
		err = pushOnce(ctx, b, o, up, res, time.Now())
		if (!errors.Is(err, errChanged) && !errors.Is(err, errTooSlow)) || attempt == 5 {
			break
		}
	}
	if o.Name != "" {
		now := time.Now().UTC()
		workspace.UpdateRemotes(o.Store, func(c *workspace.Remotes) error {
			r, ok := c.Remotes[o.Name]
			if !ok {
				return nil
			}
			if err != nil {
				r.LastError, r.ErrorAt = err.Error(), now
			} else {
				r.Pushed, r.PushedAt, r.LastError, r.ErrorAt = max(r.Pushed, res.LastSeq), now, "", time.Time{}
			}
			c.Remotes[o.Name] = r
			return nil
		})
	}
	return res, err
}

// errTooSlow is a push that took longer than a third of the grace period: the
// objects it found in the bucket may be collected before its head names
// them, so it starts over.
var errTooSlow = errors.New("the push took longer than a third of the collection grace period")

func pushOnce(ctx context.Context, b *Bucket, o PushOptions, up *uploader, res *PushResult, start time.Time) error {
	head, etag, err := b.readHead(ctx, o.Workspace)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	if head == nil || !head.Dropped.IsZero() {
		// New, or dropped by a collection: start over (the etag of a
		// tombstone makes the head write conditional all the same).
		head = &Head{Version: HeadVersion, Workspace: o.Workspace, Created: now}
	}
	head.Root, head.Host, head.Updated = o.Root, o.Host, now
	seg, err := newTimeline(workspace.Layout(o.Store).Timeline(), head)
	if err != nil {
		return fmt.Errorf("%w: push this workspace under a new id (remove the workspace line of %s)", err, workspace.Layout(o.Store).Remotes())
	}
	if len(seg) > 0 {
		if err := pushSegment(ctx, o, up, head, seg, res); err != nil {
			return err
		}
	}
	if head.Baseline == nil {
		q := up.queue(ctx)
		es, err := takeBaseline(ctx, cmp.Or(o.Walk, o.Root), baselineOptions{excluded: o.Excluded, maxFileSize: o.MaxFileSize}, q.add)
		if qerr := q.wait(); err == nil {
			err = qerr
		}
		if err != nil {
			return fmt.Errorf("baseline of %s: %w", o.Root, err)
		}
		obj, err := up.blob(ctx, encodeBaseline(es))
		if err != nil {
			return err
		}
		head.Baseline = &Baseline{Object: obj, Paths: len(es), Taken: now}
		res.Baseline = len(es)
	}
	if err := pushLogs(ctx, o.Store, head, up, res); err != nil {
		return err
	}
	if time.Since(start) > Grace()/3 {
		return errTooSlow
	}
	if err := b.writeHead(ctx, head, etag); err != nil {
		return err
	}
	res.LastSeq = head.LastSeq
	return nil
}

// pushSegment uploads the objects the timeline segment seg needs, then the
// segment itself, and adds it to head.
func pushSegment(ctx context.Context, o PushOptions, up *uploader, head *Head, seg []byte, res *PushResult) error {
	timeline := workspace.Layout(o.Store).Timeline()
	var needed []cas.Hash
	s := Segment{Bytes: int64(len(seg))}
	n := 0
	err := index.Scan(bytes.NewReader(seg), func(r *index.Record) error {
		if n == 0 {
			s.FirstSeq = r.Seq
		}
		n++
		s.LastSeq = r.Seq
		if r.State != nil {
			for _, h := range []index.Hash{r.Hash, r.XAttrs} {
				if h != "" {
					needed = append(needed, h)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("timeline %s: %w (ckfs verify explains)", timeline, err)
	}
	if s.FirstSeq <= head.LastSeq {
		return fmt.Errorf("timeline %s: seq %d after pushed seq %d", timeline, s.FirstSeq, head.LastSeq)
	}
	if err := up.objects(ctx, needed); err != nil {
		return err
	}
	if s.Object, err = up.blob(ctx, seg); err != nil {
		return err
	}
	head.Timeline = append(head.Timeline, s)
	head.TimelineBytes += s.Bytes
	head.LastSeq = s.LastSeq
	res.Records += n
	return nil
}

// newTimeline returns the whole lines of the local timeline after the
// head's, reading from where the head's last segment begins: those bytes
// must still be that segment, or the local timeline changed under the
// bucket (a repair removed a line) and nothing is pushed.
func newTimeline(path string, head *Head) ([]byte, error) {
	from := head.TimelineBytes
	var last *Segment
	if n := len(head.Timeline); n > 0 {
		last = &head.Timeline[n-1]
		from -= last.Bytes
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && head.TimelineBytes == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < head.TimelineBytes {
		return nil, fmt.Errorf("the local timeline is %d bytes, shorter than the %d pushed to the bucket", st.Size(), head.TimelineBytes)
	}
	buf := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return nil, err
	}
	if last != nil {
		if cas.Sum(buf[:last.Bytes]) != last.Object {
			return nil, errors.New("the local timeline no longer holds the bytes pushed to the bucket where they were (was it repaired since?)")
		}
		buf = buf[last.Bytes:]
	}
	return buf[:bytes.LastIndexByte(buf, '\n')+1], nil // whole lines only
}

// pushLogs ships the marks and session logs whose content changed.
func pushLogs(ctx context.Context, store string, head *Head, up *uploader, res *PushResult) error {
	names := []string{session.MarksFile}
	ents, _ := os.ReadDir(session.Dir(store))
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".jsonl") && e.Type().IsRegular() {
			names = append(names, "sessions/"+n)
		}
	}
	for _, name := range names {
		if !validFileName(name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		if h := cas.Sum(data); head.Files[name] == h {
			continue
		}
		obj, err := up.blob(ctx, data)
		if err != nil {
			return err
		}
		if head.Files == nil {
			head.Files = map[string]cas.Hash{}
		}
		head.Files[name] = obj
		res.Files++
	}
	return nil
}

// uploader puts objects into the bucket, several at a time, each once.
type uploader struct {
	b        *Bucket
	local    *cas.Local
	res      *PushResult
	progress func(done, total int)
	mu       sync.Mutex
	done     map[cas.Hash]bool // in the bucket, checked or uploaded by this push
}

// objects uploads the local objects hs names.
func (u *uploader) objects(ctx context.Context, hs []cas.Hash) error {
	todo := make([]cas.Hash, 0, len(hs))
	u.mu.Lock()
	if u.done == nil {
		u.done = map[cas.Hash]bool{}
	}
	for _, h := range hs {
		if !u.done[h] {
			u.done[h] = true
			todo = append(todo, h)
		}
	}
	u.mu.Unlock()
	u.res.Objects += len(todo)
	var finished atomic.Int64
	return forEach(ctx, len(todo), func(i int) error {
		if err := u.object(ctx, todo[i]); err != nil {
			return err
		}
		if u.progress != nil {
			u.progress(int(finished.Add(1)), len(todo))
		}
		return nil
	})
}

// object uploads one local object, checked against its address first: the
// bucket never gets bytes the local store would refuse.
func (u *uploader) object(ctx context.Context, h cas.Hash) error {
	raw, err := u.local.Raw(h)
	if errors.Is(err, cas.ErrNotFound) {
		u.count(func() { u.res.Missing++ })
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := cas.Decode(h, raw); err != nil {
		u.count(func() { u.res.Damaged++ })
		return nil
	}
	uploaded, err := u.b.putObject(ctx, h, raw)
	if err == nil && uploaded {
		u.count(func() { u.res.Uploaded++; u.res.UploadedBytes += int64(len(raw)) })
	}
	return err
}

// blob uploads data (a segment, a manifest, a baseline file's content)
// as an object that need not be in the local store.
func (u *uploader) blob(ctx context.Context, data []byte) (cas.Hash, error) {
	h, raw := cas.Encode(data)
	u.mu.Lock()
	seen := u.done[h]
	if u.done == nil {
		u.done = map[cas.Hash]bool{}
	}
	u.done[h] = true
	u.mu.Unlock()
	if seen {
		return h, nil
	}
	uploaded, err := u.b.putObject(ctx, h, raw)
	if err == nil && uploaded {
		u.count(func() { u.res.Uploaded++; u.res.UploadedBytes += int64(len(raw)) })
	}
	return h, err
}

func (u *uploader) count(f func()) {
	u.mu.Lock()
	f()
	u.mu.Unlock()
}

// blobQueue uploads blobs on uploadWorkers goroutines while the caller
// goes on producing them (the baseline walk).
type blobQueue struct {
	u    *uploader
	jobs chan []byte
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

func (u *uploader) queue(ctx context.Context) *blobQueue {
	q := &blobQueue{u: u, jobs: make(chan []byte, uploadWorkers)}
	for range uploadWorkers {
		q.wg.Go(func() {
			for data := range q.jobs {
				if _, err := u.blob(ctx, data); err != nil {
					q.mu.Lock()
					q.err = cmp.Or(q.err, err)
					q.mu.Unlock()
				}
			}
		})
	}
	return q
}

// add queues data and returns its address; a failed upload is reported by
// wait, and stops the producer at its next add.
func (q *blobQueue) add(data []byte) (cas.Hash, error) {
	q.mu.Lock()
	err := q.err
	q.mu.Unlock()
	if err != nil {
		return "", err
	}
	q.jobs <- data
	return cas.Sum(data), nil
}

func (q *blobQueue) wait() error {
	close(q.jobs)
	q.wg.Wait()
	return q.err
}
