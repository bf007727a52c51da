package rewind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/safename"
)

// JournalVersion is the format version of journal files.
const JournalVersion = 1

// Journal is a pending rewind: written and fsynced before the first file is
// touched, removed after the rewind's records are appended. While it
// exists, no other rewind runs.
type Journal struct {
	V       int           `json:"v"`
	Op      string        `json:"op"`
	Target  uint64        `json:"target"`
	Root    string        `json:"root"`
	Created time.Time     `json:"created"`
	Paths   []JournalPath `json:"paths"`
}

// JournalPath is one path the rewind changes: what it will be, and what it
// was (whose content is in the store, so rollback can put it back).
type JournalPath struct {
	Path    string      `json:"path"`
	Target  index.State `json:"target"`
	Current index.State `json:"current"`
}

// ValidOp reports whether s can be an operation id (and a file name).
func ValidOp(s string) bool { return safename.Valid(s, 64) }

// ParseJournal decodes and validates a journal. Paths are checked like
// record paths: a journal that names "../x" or "/etc" is refused.
func ParseJournal(b []byte) (*Journal, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var j Journal
	if err := dec.Decode(&j); err != nil {
		return nil, err
	}
	if j.V != JournalVersion {
		return nil, fmt.Errorf("unknown journal version %d (this ckfs reads %d; upgrade ckfs)", j.V, JournalVersion)
	}
	if !ValidOp(j.Op) {
		return nil, fmt.Errorf("bad op id %q", j.Op)
	}
	if !filepath.IsAbs(j.Root) {
		return nil, fmt.Errorf("root %q is not absolute", j.Root)
	}
	seen := map[string]bool{}
	for i := range j.Paths {
		p := &j.Paths[i]
		dec, err := index.DecodePath(p.Path)
		if err != nil {
			return nil, err
		}
		p.Path = dec
		if err := index.ValidatePath(p.Path); err != nil {
			return nil, err
		}
		if seen[p.Path] {
			return nil, fmt.Errorf("path %q appears twice", p.Path)
		}
		seen[p.Path] = true
		if err := p.Target.Validate(false); err != nil {
			return nil, fmt.Errorf("%s: target: %w", p.Path, err)
		}
		if err := p.Current.Validate(false); err != nil {
			return nil, fmt.Errorf("%s: current: %w", p.Path, err)
		}
	}
	return &j, nil
}

// JournalDir is where a store keeps pending journals.
func JournalDir(store string) string { return filepath.Join(store, "journal") }

func journalPath(dir, op string) string { return filepath.Join(dir, op+".json") }

// WriteJournal writes j durably: temp file, fsync, rename, fsync directory.
func WriteJournal(dir string, j *Journal) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Paths in their record form: byte-exact even when not UTF-8.
	c := *j
	c.Paths = make([]JournalPath, len(j.Paths))
	for i, p := range j.Paths {
		p.Path = index.EncodePath(p.Path)
		c.Paths[i] = p
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(journalPath(dir, j.Op), append(b, '\n'), 0o600)
}

// ReadJournal reads the journal of op.
func ReadJournal(dir, op string) (*Journal, error) {
	if !ValidOp(op) {
		return nil, fmt.Errorf("%q is not an operation id", op)
	}
	b, err := os.ReadFile(journalPath(dir, op))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no pending rewind %s (nothing in %s)", op, dir)
		}
		return nil, err
	}
	j, err := ParseJournal(b)
	if err != nil {
		return nil, &DamagedJournalError{Op: op, Path: journalPath(dir, op), Err: err}
	}
	if j.Op != op {
		return nil, &DamagedJournalError{Op: op, Path: journalPath(dir, op), Err: fmt.Errorf("it names op %s", j.Op)}
	}
	return j, nil
}

// DamagedJournalError is a journal that cannot be read back. It cannot be
// rolled back, only set aside (Applier.Abandon).
type DamagedJournalError struct {
	Op, Path string
	Err      error
}

func (e *DamagedJournalError) Error() string {
	return fmt.Sprintf("the journal of rewind %s (%s) is damaged: %v; it cannot be rolled back: ckfs rewind --abandon %s sets it aside and leaves the files as they are (ckfs log and git status show what that rewind left)", e.Op, e.Path, e.Err, e.Op)
}

func (e *DamagedJournalError) Unwrap() error { return e.Err }

// setAside renames the damaged journal of op out of the way, to
// OP.json.damaged beside it: kept for whoever wants to look at it, and
// never read as a journal again.
func setAside(dir, op string) error {
	p := journalPath(dir, op)
	if err := os.Rename(p, p+".damaged"); err != nil {
		return err
	}
	return durable.SyncDir(dir)
}

// RemoveJournal deletes the journal of op durably.
func RemoveJournal(dir, op string) error {
	if err := os.Remove(journalPath(dir, op)); err != nil {
		return err
	}
	return durable.SyncDir(dir)
}

// PendingJournals lists the op ids of the journals in dir.
func PendingJournals(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var ops []string
	for _, e := range ents {
		// A name no rewind gives its journal is none of ckfs's.
		if op, ok := strings.CutSuffix(e.Name(), ".json"); ok && ValidOp(op) {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	return ops, nil
}
