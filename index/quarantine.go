package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/gofrs/flock"
)

// Quarantine. A timeline line that is not a valid record (garbage, a seq
// that does not increase, a line longer than any record, a torn append)
// stops every reader at that line. QuarantineBadLines, run by
// `ckfs verify --repair`, makes the timeline load again without dropping a
// byte: every bad line is moved, verbatim, to a file under quarantine/,
// with a report of why, and the timeline is rewritten (temp file, fsync,
// rename, fsync) with the good lines only, in their order. A record whose
// seq is not above the last kept one is bad, so the kept records keep
// strictly increasing seqs (gaps are allowed).

// QuarantineDir is where bad lines go, beside the timeline.
const QuarantineDir = "quarantine"

// BadLine is one line moved to quarantine.
type BadLine struct {
	Line   int    `json:"line"`   // 1-based line number in the timeline as it was
	Offset int64  `json:"offset"` // byte offset of its start
	Size   int    `json:"size"`   // bytes, newline excluded
	Torn   bool   `json:"torn,omitempty"`
	Error  string `json:"error"`
}

// Quarantined is what QuarantineBadLines did.
type Quarantined struct {
	Lines  []BadLine `json:"lines"`
	Kept   int       `json:"kept"`             // records kept in the timeline
	File   string    `json:"file,omitempty"`   // the bad lines, verbatim, one per line
	Report string    `json:"report,omitempty"` // why each was moved (this value, as JSON)
}

// QuarantineBadLines moves every bad line of the timeline in dir to
// quarantine (see above). It takes the store's lock, so it fails with
// ErrLocked while a daemon or a rewind holds it. Nothing changes when every
// line is good.
func QuarantineBadLines(dir string, now time.Time) (*Quarantined, error) {
	lk := flock.New(filepath.Join(dir, LockFile))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock store %s: %w", dir, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w (%s): unmount it first", ErrLocked, dir)
	}
	defer lk.Unlock()
	path := filepath.Join(dir, TimelineFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &Quarantined{}, nil
		}
		return nil, err
	}
	q := &Quarantined{}
	// Every line first: what parses, with its seq. The lines kept are the
	// longest run of parsed records whose seqs increase (not the first
	// that do: one record whose seq lost or gained a digit must go alone,
	// not take every good record after it).
	lines := timelineLines(data)
	var parsed []int // indexes of lines that parse
	var seqs []uint64
	for i, l := range lines {
		if l.err == nil {
			parsed, seqs = append(parsed, i), append(seqs, l.seq)
		}
	}
	keep := map[int]bool{}
	for _, j := range longestIncreasing(seqs) {
		keep[parsed[j]] = true
	}
	var good, bad bytes.Buffer
	prev := uint64(0)
	for i, l := range lines {
		text := data[l.off:l.end]
		if keep[i] {
			prev = l.seq
			q.Kept++
			good.Write(text)
			good.WriteByte('\n')
			continue
		}
		err := l.err
		if err == nil {
			err = fmt.Errorf("seq %d is out of order (the record before it that is kept has seq %d)", l.seq, prev)
		}
		q.Lines = append(q.Lines, BadLine{Line: i + 1, Offset: int64(l.off), Size: len(text), Torn: l.torn, Error: err.Error()})
		bad.Write(text)
		bad.WriteByte('\n')
	}
	if len(q.Lines) == 0 {
		return q, nil
	}
	qdir := filepath.Join(dir, QuarantineDir)
	if err := os.MkdirAll(qdir, 0o700); err != nil {
		return nil, err
	}
	stamp := now.UTC().Format("20060102T150405.000000000Z")
	q.File = filepath.Join(qdir, "snapshots-"+stamp+".lines")
	q.Report = filepath.Join(qdir, "snapshots-"+stamp+".json")
	// The bad lines are durable in quarantine before the timeline loses
	// them.
	if err := durable.WriteFile(q.File, bad.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("quarantine bad timeline lines: %w", err)
	}
	rep, _ := json.MarshalIndent(q, "", "  ")
	if err := durable.WriteFile(q.Report, append(rep, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("quarantine bad timeline lines: %w", err)
	}
	if err := durable.WriteFile(path, good.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("rewrite %s without its bad lines: %w", path, err)
	}
	return q, nil
}

// timelineLine is one line of a timeline being repaired: where it is,
// and what it parses to.
type timelineLine struct {
	off, end int
	torn     bool
	seq      uint64
	err      error
}

// timelineLines splits data into lines and parses each.
func timelineLines(data []byte) []timelineLine {
	var lines []timelineLine
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		l := timelineLine{off: off, end: off + nl}
		if nl < 0 {
			l.end, l.torn = len(data), true
		}
		text := data[l.off:l.end]
		switch {
		case l.torn:
			l.err = errors.New("no newline at end: an append was interrupted")
		case len(text) > maxLine:
			l.err = fmt.Errorf("line longer than %d bytes", maxLine)
		default:
			var rec *Record
			if rec, l.err = ParseRecord(text); l.err == nil {
				l.seq = rec.Seq
			}
		}
		lines = append(lines, l)
		off = l.end + 1
	}
	return lines
}

// longestIncreasing returns the indexes of a longest strictly increasing
// subsequence of s, in order; among equally long ones, the one that ends
// with the smallest values (patience sorting, O(n log n)).
func longestIncreasing(s []uint64) []int {
	var tails []int // tails[k]: index of the smallest tail of a run of length k+1
	prev := make([]int, len(s))
	for i, v := range s {
		k := sort.Search(len(tails), func(k int) bool { return s[tails[k]] >= v })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([]int, len(tails))
	for k, i := len(tails)-1, -1; k >= 0; k-- {
		if i < 0 {
			i = tails[len(tails)-1]
		} else {
			i = prev[i]
		}
		out[k] = i
	}
	return out
}
