package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/internal/safename"
)

// Head is workspaces/<id>/head.json: everything a workspace has in the
// bucket, by address. It is the one mutable key of a workspace, and is
// replaced only by a conditional write against the ETag it was read with.
type Head struct {
	Version   int       `json:"version"`
	Workspace string    `json:"workspace"`
	Root      string    `json:"root"` // where the workspace was, for people
	Host      string    `json:"host"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	// Timeline is the local timeline's first TimelineBytes bytes, as
	// segments in order (the last segment's address tells a push that the
	// local timeline still holds those bytes where they were).
	Timeline      []Segment `json:"timeline"`
	TimelineBytes int64     `json:"timeline_bytes"`
	LastSeq       uint64    `json:"last_seq"`
	// Watermark is the first checkpoint a collection of the bucket keeps
	// restorable (0: all); objects only earlier ones needed may be gone.
	Watermark uint64 `json:"watermark,omitempty"`
	// Baseline is the manifest of the workspace's files when it was first
	// pushed: what the files no record names hold at every checkpoint.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Dropped is set when a collection removed the workspace (it was not
	// pushed to for the drop age): its head stays as this tombstone, with
	// nothing else, so that a push racing the drop is never lost (the
	// tombstone is written conditionally) and a later push starts over.
	Dropped time.Time `json:"dropped,omitzero"`
	// Files are the store's other logs (marks.jsonl, sessions/<id>.jsonl),
	// each as one object of its whole content at the last push.
	Files map[string]cas.Hash `json:"files,omitempty"`
}

// Segment is a run of whole timeline lines, stored as one object.
type Segment struct {
	Object   cas.Hash `json:"object"`
	Bytes    int64    `json:"bytes"`
	FirstSeq uint64   `json:"first_seq"`
	LastSeq  uint64   `json:"last_seq"`
}

// Baseline names the manifest object (section 6a of docs/format.md).
type Baseline struct {
	Object cas.Hash  `json:"object"`
	Paths  int       `json:"paths"`
	Taken  time.Time `json:"taken"`
}

// HeadVersion is the version of head.json this ckfs writes and reads.
const HeadVersion = 1

func headKey(ws string) string { return "workspaces/" + ws + "/head.json" }

// ValidWorkspace reports whether s can be a workspace id.
func ValidWorkspace(s string) bool { return safename.Valid(s, 64) }

// ParseHead reads a head strictly: an unknown field, a gap between
// segments or a count that does not add up is an error, never a guess.
func ParseHead(data []byte) (*Head, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var h Head
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	if dec.More() {
		return nil, errors.New("head: data after the JSON object")
	}
	if h.Version != HeadVersion {
		return nil, fmt.Errorf("head: version %d, this ckfs reads version %d (upgrade ckfs)", h.Version, HeadVersion)
	}
	if !ValidWorkspace(h.Workspace) {
		return nil, fmt.Errorf("head: bad workspace id %q", h.Workspace)
	}
	var bytes int64
	var last uint64
	for i, s := range h.Timeline {
		if s.Object.IsZero() || s.Bytes <= 0 || s.FirstSeq <= last || s.LastSeq < s.FirstSeq {
			return nil, fmt.Errorf("head: segment %d does not follow the one before (seqs %d-%d after %d, %d bytes)", i, s.FirstSeq, s.LastSeq, last, s.Bytes)
		}
		bytes += s.Bytes
		last = s.LastSeq
	}
	if bytes != h.TimelineBytes || last != h.LastSeq {
		return nil, fmt.Errorf("head: segments hold %d bytes to seq %d, the head says %d bytes to seq %d", bytes, last, h.TimelineBytes, h.LastSeq)
	}
	if h.Watermark > h.LastSeq+1 {
		return nil, fmt.Errorf("head: watermark %d is beyond the last seq %d", h.Watermark, h.LastSeq)
	}
	if !h.Dropped.IsZero() && (len(h.Timeline) > 0 || h.Baseline != nil || len(h.Files) > 0) {
		return nil, errors.New("head: a dropped workspace that still names objects")
	}
	if h.Baseline != nil && h.Baseline.Object.IsZero() {
		return nil, errors.New("head: baseline without an object")
	}
	for name, o := range h.Files {
		if o.IsZero() || !validFileName(name) {
			return nil, fmt.Errorf("head: bad file entry %q", name)
		}
	}
	return &h, nil
}

// validFileName is a log the head may name: marks.jsonl or
// sessions/<id>.jsonl.
func validFileName(name string) bool {
	if name == "marks.jsonl" {
		return true
	}
	const pre, suf = "sessions/", ".jsonl"
	if len(name) <= len(pre)+len(suf) || name[:len(pre)] != pre || name[len(name)-len(suf):] != suf {
		return false
	}
	return safename.Valid(name[len(pre):len(name)-len(suf)], 128)
}

// readHead returns the workspace's head and its ETag; nil when the
// workspace has none yet.
func (b *Bucket) readHead(ctx context.Context, ws string) (*Head, string, error) {
	data, etag, err := b.get(ctx, headKey(ws), maxGetHead)
	if errors.Is(err, errMissing) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	h, err := ParseHead(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s/%s: %w", b.desc, headKey(ws), err)
	}
	if h.Workspace != ws {
		return nil, "", fmt.Errorf("%s/%s: names workspace %s", b.desc, headKey(ws), h.Workspace)
	}
	return h, etag, nil
}

// writeHead replaces the head read with etag ("" when there was none); it
// fails with errChanged when another writer replaced it meanwhile.
func (b *Bucket) writeHead(ctx context.Context, h *Head, etag string) error {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	o := putOptions{ifNone: etag == "", ifMatch: etag}
	_, err = b.put(ctx, headKey(h.Workspace), append(data, '\n'), o)
	return err
}
