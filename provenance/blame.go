package provenance

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/index"
)

// Who made the change a line comes from (Origin.By).
const (
	ByWindow  = "window"  // a tool call's window wrote it
	ByYou     = "you"     // an edit made outside any window: through the mount, found on disk, or on disk now and not recorded yet
	ByBefore  = "before"  // it was there when ckfs first recorded the file
	ByRewind  = "rewind"  // a rewind or revert wrote it and no earlier version held it (a merge of both sides)
	ByUnknown = "unknown" // it follows a version whose content was not stored, so who wrote it is not known
)

// Origin is the change a line comes from.
type Origin struct {
	By     string    `json:"by"`
	Window string    `json:"window,omitempty"` // ByWindow: the window; ByRewind: the operation
	Seq    uint64    `json:"seq,omitempty"`    // the record of the version that brought it; 0 for the disk now
	Time   time.Time `json:"time"`             // when that version was recorded
	Path   string    `json:"path"`             // where it was written (another path before a rename)
	// Restored names the rewind or revert that brought the line back after
	// a later change had removed it; the origin is still the change that
	// first wrote it.
	Restored string `json:"restored,omitempty"`
}

// Line is one line of a file with its origin.
type Line struct {
	Text   string `json:"text"`
	Origin Origin `json:"origin"`
}

// Content reads a recorded state's bytes from the store.
type Content func(index.State) ([]byte, error)

// Now is the file on disk now, blamed after the timeline's last record of
// it: a difference is the user's edit, not recorded yet.
type Now struct {
	Data []byte
	Time time.Time
}

var (
	// ErrBinary: blame shows text lines; the file holds a NUL.
	ErrBinary = errors.New("binary file: blame shows lines of text")
	// ErrNoFile: the path was not a regular file at the checkpoint.
	ErrNoFile = errors.New("not a file there")
	// ErrNoHistory: ckfs recorded nothing of the path.
	ErrNoHistory = errors.New("ckfs has recorded no change to it")
)

// Blame returns the lines of path at checkpoint at (the state StateAt
// gives), each with the change it comes from: the newest version that
// wrote it, across every version of the path recorded by then. A line a
// rewind or revert brought back keeps the change that first wrote it
// (with Restored set). A path a window created by renaming another, which
// the window recorded (the other's pre-image and its removal), continues
// that path's history. With now, the file as it is on disk is blamed
// after the last version (at must be the end of the timeline).
func Blame(records []index.Record, path string, at uint64, get Content, now *Now) ([]Line, error) {
	b := &blamer{records: records, get: get, ops: rewindOps(records), seen: map[string]bool{}, restoredAs: map[restoreKey]int32{}}
	vs, err := b.versions(path, at)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 && now == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNoHistory)
	}
	if now != nil {
		vs = append(vs, version{by: ByYou, time: now.Time, path: path, data: now.Data, state: index.State{Type: index.TypeFile}, loaded: true})
	}
	fv, err := b.lines(vs)
	if err != nil {
		return nil, err
	}
	return b.result(fv), nil
}

// rewindOps is the set of rewind and revert operation ids: their images
// carry the op id where a window's carry the window's.
func rewindOps(records []index.Record) map[string]bool {
	ops := map[string]bool{}
	for i := range records {
		if records[i].Kind == index.KindRewind {
			ops[records[i].Op] = true
		}
	}
	return ops
}

// IsBinary reports whether b looks binary (a NUL in its first 8000 bytes),
// as the diffs decide.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}
