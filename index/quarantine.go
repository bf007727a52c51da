package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	var good, bad bytes.Buffer
	var last uint64
	for off, line := 0, 1; off < len(data); line++ {
		nl := bytes.IndexByte(data[off:], '\n')
		end, torn := off+nl, false
		if nl < 0 {
			end, torn = len(data), true
		}
		text := data[off:end]
		var perr error
		var rec *Record
		switch {
		case torn:
			perr = errors.New("no newline at end: an append was interrupted")
		case len(text) > maxLine:
			perr = fmt.Errorf("line longer than %d bytes", maxLine)
		default:
			rec, perr = ParseRecord(text)
			if perr == nil && rec.Seq <= last {
				perr = fmt.Errorf("seq %d does not follow seq %d", rec.Seq, last)
			}
		}
		if perr != nil {
			q.Lines = append(q.Lines, BadLine{Line: line, Offset: int64(off), Size: len(text), Torn: torn, Error: perr.Error()})
			bad.Write(text)
			bad.WriteByte('\n')
		} else {
			last = rec.Seq
			q.Kept++
			good.Write(text)
			good.WriteByte('\n')
		}
		off = end + 1
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
