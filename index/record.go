// Package index is ckfs's file timeline: the append-only JSONL log of
// window boundaries and file images (snapshots.jsonl), its single writer,
// its streaming reader, and the pure functions over it (StateAt, window
// listing). It knows records, not FUSE, and imports nothing else of ckfs;
// hashes are carried as their "blake3:<hex>" strings.
//
// docs/format.md is the normative description of every record kind.
package index

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/internal/hashid"
)

// Version is the record format version this package writes and reads.
const Version = 1

// ErrVersion means a record has a format version this ckfs does not know.
var ErrVersion = errors.New("unknown record format version")

// Kind is the kind of a timeline record.
type Kind string

// The record kinds; docs/format.md describes each.
const (
	KindOpen      Kind = "open"      // a tool-call window starts
	KindClose     Kind = "close"     // a tool-call window ends
	KindBefore    Kind = "before"    // pre-image, first mutation of a path in a window
	KindAfter     Kind = "after"     // post-image
	KindSkip      Kind = "skip"      // the path changed but its content was not stored
	KindOutside   Kind = "outside"   // a change made while no window was open
	KindRewind    Kind = "rewind"    // a rewind happened; its images follow
	KindWatermark Kind = "watermark" // checkpoints before target are no longer restorable
	KindMount     Kind = "mount"     // a daemon began serving the workspace again
)

// ReasonInterrupted is the reason of a close record written when a daemon
// starts and finds a window that a daemon which stopped without closing it
// left open.
const ReasonInterrupted = "interrupted"

// ReasonUnfinished is the reason of a close record for a tool call the
// agent never reported finished (rejected, blocked by another hook,
// aborted, still running in the background): the end of its turn, the next
// prompt or the next session start closed it.
const ReasonUnfinished = "unfinished"

// How an image record's window was told when several windows were open
// (the By field): matched to the tool call's process, or credited to the
// newest window because the writer could not be matched.
const (
	ByProcess = "process"
	ByGuess   = "guess"
)

// ReasonFailed is the reason of a close record for a call that finished
// and failed: the agent reported it failed (Claude Code's
// PostToolUseFailure), or the command ckfs run ran exited non-zero.
const ReasonFailed = "failed"

// Interrupted reports whether the record closes a window its daemon never
// closed (it died); the window's post-images were taken at the next start.
func (r *Record) Interrupted() bool {
	return r.Kind == KindClose && r.Reason == ReasonInterrupted
}

// FileType is the type of the file at a path.
type FileType string

// The file types.
const (
	TypeAbsent  FileType = "absent" // the path did not exist
	TypeFile    FileType = "file"
	TypeSymlink FileType = "symlink" // content is the link target
	TypeDir     FileType = "dir"
	// Special files: no content; a device also has its device number.
	TypeFIFO   FileType = "fifo"
	TypeSocket FileType = "socket"
	TypeChar   FileType = "chardev"
	TypeBlock  FileType = "blockdev"
)

// Special reports whether t is a FIFO, a socket or a device node: a file
// with no content, restored by creating the node again.
func (t FileType) Special() bool {
	switch t {
	case TypeFIFO, TypeSocket, TypeChar, TypeBlock:
		return true
	}
	return false
}

// Image tells whether an outside record is a pre-image or a post-image.
type Image string

// The images of an outside record.
const (
	ImageBefore Image = "before"
	ImageAfter  Image = "after"
)

// Where a check found a change made behind the mount (Record.Found): the
// check every mount makes of the recorded paths, or the check before a
// path's first change in a period.
const (
	FoundMount  = "mount"
	FoundChange = "change"
)

// Hash is an object address in record form ("blake3:<64 hex digits>"); the
// empty Hash is written as JSON null and means "no content". It is the one
// hash type of ckfs (package hashid), the object store's too.
type Hash = hashid.Hash

// validHash reports whether s is "blake3:" and 64 lowercase hex digits.
func validHash(s string) bool { return hashid.Valid(s) }

// State is the state of one path: what a file image records.
type State struct {
	Hash  Hash     `json:"hash"`  // content (file bytes or link target); "" if none stored
	Size  int64    `json:"size"`  // content size in bytes
	MTime int64    `json:"mtime"` // modification time, ns since the epoch
	Mode  uint32   `json:"mode"`  // permission bits with setuid/setgid/sticky (07777)
	Type  FileType `json:"type"`
	Rdev  uint64   `json:"rdev,omitempty"` // device number of a chardev or blockdev
	// Owner is "uid:gid"; empty in records made before ckfs recorded
	// owners (then owner and extended attributes are not compared or
	// restored).
	Owner string `json:"owner,omitempty"`
	// XAttrs names the object holding the path's extended attributes (the
	// captured namespaces only, see XAttrCaptured), "" when it has none.
	XAttrs Hash `json:"xattrs,omitempty"`
}

// HasMeta reports whether the state records owner and extended
// attributes (states recorded before ckfs did have neither).
func (s State) HasMeta() bool { return s.Owner != "" }

// Exists reports whether the state is of a path that exists.
func (s State) Exists() bool { return s.Type != TypeAbsent }

// SameContent reports whether a and b hold the same thing: type, content and
// mode. Times are ignored.
func (s State) SameContent(o State) bool {
	return s.Type == o.Type && s.Hash == o.Hash && s.Mode == o.Mode && s.Size == o.Size && s.Rdev == o.Rdev && s.Owner == o.Owner && s.XAttrs == o.XAttrs
}

// Record is one line of the timeline. Which fields are set depends on Kind;
// Validate checks the combination.
type Record struct {
	V      int       `json:"v"`
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Kind   Kind      `json:"kind"`
	Window string    `json:"window,omitempty"` // window id (rewind op id for a rewind's images)
	Path   string    `json:"path,omitempty"`
	*State           // set for before, after, skip, outside

	Tool   string `json:"tool,omitempty"`   // open: the tool that runs in the window
	Label  string `json:"label,omitempty"`  // open: free text
	Reason string `json:"reason,omitempty"` // skip: why the content was not stored; watermark: the policy; close: "interrupted", "unfinished" or "failed"
	Image  Image  `json:"image,omitempty"`  // outside: before or after
	// Found is set on an outside post-image that a check found on disk
	// rather than saw through the mount: FoundMount or FoundChange.
	Found  string  `json:"found,omitempty"`
	By     string  `json:"by,omitempty"`     // before, after, skip in a window: how the window was told when several were open
	Op     string  `json:"op,omitempty"`     // rewind: operation id
	Target *uint64 `json:"target,omitempty"` // rewind: the checkpoint seq rewound to; watermark: the first restorable seq
	// CTime is a pre-image's status change time (ns since the epoch), as
	// the lstat that took it read it; 0 when not recorded. A rename, a
	// chmod or a write moves it, and no tool can set it back: a path's
	// first pre-image with a ctime after a checkpoint changed where ckfs
	// could not see it (StateAt).
	CTime int64 `json:"ctime,omitempty"`
}

// IsImage reports whether the record carries the state of a path.
func (r *Record) IsImage() bool {
	switch r.Kind {
	case KindBefore, KindAfter, KindSkip, KindOutside:
		return true
	}
	return false
}

// IsPreImage reports whether the record is the state of its path before a
// change (a before record, or an outside record's before image).
func (r *Record) IsPreImage() bool {
	return r.Kind == KindBefore || (r.Kind == KindOutside && r.Image == ImageBefore)
}

// IsBoundary reports whether the record's seq is a checkpoint.
func (r *Record) IsBoundary() bool {
	return r.Kind == KindOpen || r.Kind == KindClose || r.Kind == KindRewind
}

// Validate checks that the record is well formed. Records that fail are
// errors, never data.
func (r *Record) Validate() error { return r.validate(ValidatePath) }

// validate is Validate with the path check given (the cache's remembers
// the paths it has checked).
func (r *Record) validate(validPath func(string) error) error {
	if r.V != Version {
		return fmt.Errorf("%w %d (this ckfs reads version %d; upgrade ckfs to read this timeline)", ErrVersion, r.V, Version)
	}
	if r.Seq == 0 {
		return errors.New("seq must be positive")
	}
	if r.Time.IsZero() {
		return errors.New("time is missing")
	}
	if r.Found != "" && r.Kind != KindOutside {
		return fmt.Errorf("%s record with found %q (only an outside record has one)", r.Kind, r.Found)
	}
	if r.By != "" && !r.IsImage() {
		return fmt.Errorf("%s record with by %q (only image records have one)", r.Kind, r.By)
	}
	if r.CTime != 0 && (!r.IsPreImage() || r.CTime < 0) {
		return fmt.Errorf("%s record with ctime %d (only a pre-image has one, positive)", r.Kind, r.CTime)
	}
	switch r.Kind {
	case KindOpen, KindClose:
		if r.Window == "" {
			return fmt.Errorf("%s record without window id", r.Kind)
		}
		if r.Path != "" || r.State != nil {
			return fmt.Errorf("%s record must not carry a path", r.Kind)
		}
		if r.Reason != "" && (r.Kind != KindClose || (r.Reason != ReasonInterrupted && r.Reason != ReasonUnfinished && r.Reason != ReasonFailed)) {
			return fmt.Errorf("%s record with reason %q (only a close may have one: %q, %q or %q)", r.Kind, r.Reason, ReasonInterrupted, ReasonUnfinished, ReasonFailed)
		}
	case KindRewind:
		if r.Op == "" || r.Target == nil {
			return errors.New("rewind record needs op and target")
		}
		if r.Path != "" || r.State != nil {
			return errors.New("rewind record must not carry a path")
		}
	case KindMount:
		if r.Path != "" || r.State != nil || r.Window != "" || r.Target != nil {
			return errors.New("mount record must not carry a path, window or target")
		}
	case KindWatermark:
		if r.Target == nil || *r.Target == 0 || *r.Target >= r.Seq {
			return errors.New("watermark record needs a target between 1 and its own seq")
		}
		if r.Path != "" || r.State != nil || r.Window != "" {
			return errors.New("watermark record must not carry a path or window")
		}
	case KindBefore, KindAfter, KindSkip, KindOutside:
		return r.validateImage(validPath)
	default:
		return fmt.Errorf("unknown record kind %q", r.Kind)
	}
	return nil
}

// validateImage checks a record of a path's state: before, after, skip or
// outside.
func (r *Record) validateImage(validPath func(string) error) error {
	if err := validPath(r.Path); err != nil {
		return err
	}
	if r.By != "" && (r.Window == "" || (r.By != ByProcess && r.By != ByGuess)) {
		return fmt.Errorf("%s record for %q: by %q (only an image in a window may have one: %q or %q)", r.Kind, r.Path, r.By, ByProcess, ByGuess)
	}
	if r.State == nil {
		return fmt.Errorf("%s record for %q without state", r.Kind, r.Path)
	}
	if err := r.State.Validate(r.Kind == KindSkip); err != nil {
		return fmt.Errorf("%s record for %q: %w", r.Kind, r.Path, err)
	}
	switch r.Kind {
	case KindBefore, KindAfter:
		if r.Window == "" {
			return fmt.Errorf("%s record for %q without window id", r.Kind, r.Path)
		}
	case KindSkip:
		if r.Reason == "" {
			return fmt.Errorf("skip record for %q without reason", r.Path)
		}
	case KindOutside:
		if r.Window != "" {
			return fmt.Errorf("outside record for %q inside window %q", r.Path, r.Window)
		}
		if r.Image != ImageBefore && r.Image != ImageAfter {
			return fmt.Errorf("outside record for %q: image %q, want before or after", r.Path, r.Image)
		}
		if r.Found != "" && (r.Image != ImageAfter || (r.Found != FoundMount && r.Found != FoundChange)) {
			return fmt.Errorf("outside record for %q: found %q with image %q (want %q or %q, with image after)", r.Path, r.Found, r.Image, FoundMount, FoundChange)
		}
	}
	return nil
}

// Validate checks a state on its own; noHash allows a file or symlink
// without a content hash (a skip record's state).
func (s *State) Validate(noHash bool) error {
	if s.Mode&^0o7777 != 0 {
		return fmt.Errorf("mode %o has bits beyond 07777", s.Mode)
	}
	if s.Size < 0 {
		return fmt.Errorf("negative size %d", s.Size)
	}
	if s.Rdev != 0 && s.Type != TypeChar && s.Type != TypeBlock {
		return fmt.Errorf("%s has a device number", s.Type)
	}
	if s.Owner != "" && !validOwner(s.Owner) {
		return fmt.Errorf("owner %q: want \"uid:gid\"", s.Owner)
	}
	if s.XAttrs != "" && !validHash(string(s.XAttrs)) {
		return fmt.Errorf("xattrs %q: want a content address", s.XAttrs)
	}
	if s.XAttrs != "" && (s.Type == TypeAbsent || s.Type == TypeSymlink) {
		return fmt.Errorf("%s has extended attributes recorded", s.Type)
	}
	switch s.Type {
	case TypeAbsent, TypeDir:
		if s.Hash != "" {
			return fmt.Errorf("%s has a content hash", s.Type)
		}
	case TypeFile, TypeSymlink:
		if s.Hash == "" && !noHash {
			return fmt.Errorf("%s without content hash", s.Type)
		}
	case TypeFIFO, TypeSocket, TypeChar, TypeBlock:
		if s.Hash != "" || s.Size != 0 {
			return fmt.Errorf("%s has content", s.Type)
		}
	default:
		return fmt.Errorf("unknown file type %q", s.Type)
	}
	return nil
}

// ValidatePath checks that p is a path relative to the workspace root:
// slash-separated, not empty, not absolute, no "." or ".." or empty
// element, no NUL. Every path read from a record or journal passes here
// before it is used.
func ValidatePath(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("path %q contains NUL", p)
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q is absolute", p)
	}
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "":
			return fmt.Errorf("path %q has an empty element", p)
		case ".", "..":
			return fmt.Errorf("path %q has a %q element", p, el)
		}
	}
	return nil
}
