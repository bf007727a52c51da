// Package verify checks a store end to end — every object rehashed, every
// record's object present, the timeline's and the session logs' tails, orphan
// temp files, unfinished rewinds — and says which checkpoints can no longer
// be restored in full. With repair it mends what it can (a corrupt or
// missing object from a workspace file that still holds its content, a
// torn tail, orphan temp files) and never touches the workspace's files.
package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/workspace"
)

// Report is what ckfs verify found (and, with --repair, did).
type Report struct {
	Store           string   `json:"store"`
	Objects         int      `json:"objects"`
	Bytes           int64    `json:"bytes"`
	Corrupt         []string `json:"corrupt_objects,omitempty"`
	DamagedPacks    []string `json:"damaged_packs,omitempty"` // packs whose index cannot be read: their objects are missing
	Records         int      `json:"records"`
	Watermark       uint64   `json:"watermark,omitempty"`          // checkpoints before it were collected by ckfs gc
	Tail            string   `json:"timeline_tail,omitempty"`      // a torn or bad line
	ConvTails       []string `json:"conversation_tails,omitempty"` // torn or bad lines of session logs and marks
	Missing         []string `json:"missing_objects,omitempty"`
	OrphanTemps     []string `json:"orphan_temp_files,omitempty"`
	PendingJournals []string `json:"pending_journals,omitempty"`
	Unrestorable    []uint64 `json:"unrestorable_checkpoints,omitempty"`
	Repaired        []string `json:"repaired,omitempty"`
	// Unrepaired is what --repair could not mend: the store is still not
	// whole, and the command exits non-zero.
	Unrepaired []string `json:"unrepaired,omitempty"`
	Clean      bool     `json:"clean"`

	damagedPacks []string // their paths
}

// orphanAge is how old a temp file must be to count as left by a crash
// rather than being written right now by a running daemon.
const orphanAge = time.Minute

// Progress is told the stored bytes of each object read, and when the
// work is done.
type Progress interface {
	Add64(int64)
	Finish()
}

// Store rehashes every object, checks every record's object, and
// reports torn tails, orphan temp files, pending journals and the
// checkpoints that are no longer fully restorable. With repair it removes
// corrupt objects and orphan temp files and truncates a torn tail (when no
// daemon holds the store); it never touches the workspace.
func Store(store string, repair bool, now time.Time, bar Progress) (*Report, error) {
	r := &Report{Store: store}
	s, err := cas.Open(store, nil)
	if err != nil {
		return nil, err
	}
	defer bar.Finish()
	bad, err := r.readObjects(s, bar)
	if err != nil {
		return nil, fmt.Errorf("verify objects in %s: %w", store, err)
	}
	recs, tail, err := index.Load(workspace.Layout(store).Timeline())
	if err != nil {
		return nil, err
	}
	if tail != nil {
		r.Tail = tail.Error()
		if repair {
			if recs, err = quarantineTimeline(store, now, r); err != nil {
				return nil, err
			}
		}
	}
	r.Records = len(recs)
	// Content only checkpoints below the watermark needed was collected on
	// purpose: it is not missing.
	r.Watermark, _ = index.Watermark(recs)
	live := index.Live(recs, r.Watermark)
	seen := map[string]bool{}
	for _, rec := range recs {
		if rec.State == nil || rec.Hash == "" || seen[string(rec.Hash)] || !live[rec.Hash] {
			continue
		}
		seen[string(rec.Hash)] = true
		h := rec.Hash
		if ok, _ := s.Has(h); !ok {
			r.Missing = append(r.Missing, h.String())
			bad[h.String()] = true
		}
	}
	for p, why := range s.DamagedPacks() {
		r.DamagedPacks = append(r.DamagedPacks, p+": "+why)
		r.damagedPacks = append(r.damagedPacks, p)
	}
	slices.Sort(r.DamagedPacks)
	r.Unrestorable = unrestorable(recs, bad, r.Watermark)
	if ents, err := os.ReadDir(s.TempDir()); err == nil {
		for _, e := range ents {
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > orphanAge {
				r.OrphanTemps = append(r.OrphanTemps, filepath.Join(s.TempDir(), e.Name()))
			}
		}
	}
	if r.PendingJournals, err = rewind.PendingJournals(workspace.Layout(store).Journals()); err != nil {
		return nil, err
	}
	convTorn, err := verifyConversation(store, r)
	if err != nil {
		return nil, err
	}
	if repair {
		r.repair(store, s, recs, convTorn)
	}
	r.Clean = len(r.Corrupt) == 0 && len(r.Missing) == 0 && len(r.DamagedPacks) == 0 && r.Tail == "" && len(r.OrphanTemps) == 0 && len(r.PendingJournals) == 0 && len(r.ConvTails) == 0
	return r, nil
}

// readObjects reads every object through, which checks its hash, and
// returns the corrupt ones.
func (r *Report) readObjects(s *cas.Local, bar Progress) (map[string]bool, error) {
	bad := map[string]bool{}
	err := s.Walk(func(i cas.Info) error {
		r.Objects++
		r.Bytes += i.Stored
		rc, err := s.Open(i.Hash)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		bar.Add64(i.Stored)
		if errors.Is(err, cas.ErrCorrupt) {
			r.Corrupt = append(r.Corrupt, i.Hash.String())
			bad[i.Hash.String()] = true
			return nil
		}
		return err
	})
	return bad, err
}

// repair mends what the checks found and can be mended, and names what
// cannot in r.Unrepaired.
func (r *Report) repair(store string, s *cas.Local, recs []index.Record, convTorn []string) {
	done, left := recoverCorrupt(store, s, recs, r.Corrupt)
	r.Repaired = append(r.Repaired, done...)
	for _, c := range left {
		if err := quarantine(store, s, c); err == nil {
			r.Repaired = append(r.Repaired, fmt.Sprintf("moved corrupt object %s to %s (no file holds its content now; what needed it is unrestorable)", c, QuarantineDir))
		}
		r.Unrepaired = append(r.Unrepaired, "corrupt object "+c+": its content is lost")
	}
	for _, p := range r.damagedPacks {
		// Kept whole: its objects' bytes may still help a person.
		q := workspace.Layout(store).Quarantine()
		if err := os.MkdirAll(q, 0o700); err == nil {
			if err := os.Rename(p, filepath.Join(q, filepath.Base(p))); err == nil {
				r.Repaired = append(r.Repaired, fmt.Sprintf("moved damaged pack %s to %s (its index cannot be read; the objects it held are missing)", p, QuarantineDir))
			}
		}
	}
	done, left = recoverObjects(store, s, recs, r.Missing, "missing")
	r.Repaired = append(r.Repaired, done...)
	for _, m := range left {
		r.Unrepaired = append(r.Unrepaired, "missing object "+m+": no workspace file holds its content")
	}
	for _, j := range r.PendingJournals {
		r.Unrepaired = append(r.Unrepaired, "unfinished rewind "+j+": ckfs rewind --rollback "+j+" or --abandon "+j)
	}
	for _, p := range convTorn {
		if cut, err := session.RepairTail(p); err == nil && cut {
			r.Repaired = append(r.Repaired, "cut the torn last line of "+p)
		}
	}
	for _, t := range r.OrphanTemps {
		if err := os.Remove(t); err == nil {
			r.Repaired = append(r.Repaired, "removed orphan temp file "+t)
		}
	}
}

// quarantineTimeline moves the timeline's bad lines to quarantine/ and
// returns the records it holds then.
func quarantineTimeline(store string, now time.Time, r *Report) ([]index.Record, error) {
	tl := workspace.Layout(store).Timeline()
	q, err := index.QuarantineBadLines(store, now)
	switch {
	case errors.Is(err, index.ErrLocked):
		r.Unrepaired = append(r.Unrepaired, "timeline: bad lines left in place: the store is in use (unmount it, then run ckfs verify --repair again)")
	case err != nil:
		return nil, err
	case len(q.Lines) > 0:
		r.Repaired = append(r.Repaired, fmt.Sprintf("timeline: moved %d bad line(s) to %s (line numbers and reasons in %s); kept %d records", len(q.Lines), q.File, q.Report, q.Kept))
	}
	recs, _, err := index.Load(tl)
	return recs, err
}

// unrestorable lists the window boundaries whose state names a bad object.
func unrestorable(recs []index.Record, bad map[string]bool, watermark uint64) []uint64 {
	if len(bad) == 0 {
		return nil
	}
	h := index.NewHistory(recs)
	seen := map[string]bool{}
	var badPaths []string
	for i := range recs {
		if r := &recs[i]; r.IsImage() && bad[string(r.Hash)] && !seen[r.Path] {
			seen[r.Path] = true
			badPaths = append(badPaths, r.Path)
		}
	}
	var out []uint64
	for i := range recs {
		if !recs[i].IsBoundary() || recs[i].Seq < watermark {
			continue
		}
		for _, p := range badPaths {
			if e, ok := h.At(p, recs[i].Seq); ok && bad[string(e.Hash)] {
				out = append(out, recs[i].Seq)
				break
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// verifyConversation reads the session logs and the marks log and reports
// their torn or bad lines; it returns the paths whose tail is torn (which
// --repair cuts).
func verifyConversation(store string, r *Report) ([]string, error) {
	var torn []string
	note := func(tail *session.TailError) {
		if tail != nil {
			r.ConvTails = append(r.ConvTails, tail.Error())
			if tail.Torn {
				torn = append(torn, tail.Path)
			}
		}
	}
	ids, err := session.List(store)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		_, tail, err := session.Load(session.Path(store, id))
		if err != nil {
			return nil, err
		}
		note(tail)
	}
	_, tail, err := session.LoadMarks(store)
	if err != nil {
		return nil, err
	}
	note(tail)
	return torn, nil
}
