package workspace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"
	"unicode/utf8"

	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/rewind"
)

// The control protocol: one JSON request per line, one JSON reply per
// line, over a Unix socket with mode 0600 in the (0700) store directory.
// The daemon also checks that the peer runs as its own user.

type Request struct {
	Op     string          `json:"op"` // one of the Op constants (client.go)
	Rewind *rewind.Request `json:"rewind,omitempty"`
	// Target names a rewind's checkpoint as the command line did; the
	// daemon resolves it against the timeline it reads (Rewind.Target
	// is then ignored).
	Target   *TargetSpec `json:"target_spec,omitempty"`
	RewindOp string      `json:"rewind_op,omitempty"` // rollback, abandon: the rewind's op id
	ID       string      `json:"id,omitempty"`
	Tool     string      `json:"tool,omitempty"`
	Label    string      `json:"label,omitempty"`
	GC       *GCRequest  `json:"gc,omitempty"`
	Reason   string      `json:"reason,omitempty"` // close: why, for a call that never finished
	// open: the agent process running the call and its shell command, to
	// match writes to calls that run at the same time.
	Agent   int    `json:"agent,omitempty"`
	Command string `json:"command,omitempty"`
	// open: the call's processes carry CKFS_WINDOW=ID in their
	// environment (ckfs run).
	Marked bool `json:"marked,omitempty"`
}

type Reply struct {
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	Code    int             `json:"code,omitempty"` // exit code for errors
	Seq     uint64          `json:"seq,omitempty"`
	ID      string          `json:"id,omitempty"`
	Status  *StatusInfo     `json:"status,omitempty"`
	Outcome *rewind.Outcome `json:"outcome,omitempty"`
	What    string          `json:"what,omitempty"` // a rewind's target, for people
	Refused bool            `json:"refused,omitempty"`
	GC      *gc.Result      `json:"gc,omitempty"`
}

// StatusInfo is what a live daemon reports.
type StatusInfo struct {
	PID         int      `json:"pid"`
	Root        string   `json:"root"`
	Mountpoint  string   `json:"mountpoint"`
	OpenWindows []string `json:"open_windows"`
	Windows     int      `json:"windows_opened"`
	Records     int      `json:"records"`
	ObjectsNew  int      `json:"objects_new"`
	BytesStored int64    `json:"bytes_stored"`
	Skipped     int      `json:"skipped"`
	Errors      int      `json:"capture_errors"`
	// Batched counts pre-images taken in a batch, ahead of their file's
	// change, while a tool worked through files ckfs had never recorded.
	Batched int `json:"pre_images_batched,omitempty"`
	// Disk-full events since the daemon started (writes refused with
	// ENOSPC, post-images not stored), when the current spell began, and
	// whether the store is out of room now.
	StoreFull      int       `json:"store_full_events,omitempty"`
	StoreFullSince time.Time `json:"store_full_since,omitempty"`
	StoreFullNow   bool      `json:"store_full_now,omitempty"`
}

// MaxRequest is the longest request line the daemon reads.
const MaxRequest = 64 << 10

// The longest label and shell command a window's open request carries:
// with JSON's escaping at its worst (six bytes a byte), a request stays
// under MaxRequest. A 1 MB heredoc still gets its window.
const (
	maxLabel   = 2 << 10
	maxCommand = 8 << 10
)

// bound cuts what a request carries to what the daemon reads: the label
// with an ellipsis, the command to a prefix (a prefix of the command is
// still found on the command line of the process that runs it).
func (r Request) bound() Request {
	if len(r.Label) > maxLabel {
		r.Label = cutUTF8(r.Label, maxLabel-3) + "…"
	}
	if len(r.Command) > maxCommand {
		r.Command = cutUTF8(r.Command, maxCommand)
	}
	return r
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func SocketPath(store string) string { return Layout(store).Socket() }

// Call sends one request to the daemon of store and returns its reply.
// Before a window boundary (open, close, flush) it writes back what the
// mount's page cache holds dirty (see syncMount). While the daemon is
// being succeeded (a supervisor starts a new one on the same mount after
// the old one died) it waits for the successor, up to successorWait; a
// request the dead daemon may have done without answering is sent again,
// and for a window's open or close a refusal of that second one (already
// open, not open) means the first took effect.
func Call(store string, req Request) (*Reply, error) {
	if req.Op == OpOpen || req.Op == OpClose || req.Op == OpFlush {
		syncMount(store)
	}
	deadline := time.Now().Add(successorWait)
	lost := false // a request reached a daemon that died before answering
	for {
		rep, sent, err := call(store, req)
		if rep != nil {
			if err != nil && lost && rep.Code == CodeRefused && (req.Op == OpOpen || req.Op == OpClose) {
				return &Reply{OK: true, ID: req.ID}, nil
			}
			return rep, err
		}
		if err == nil || !time.Now().Before(deadline) || !succeeding(store) {
			return rep, err
		}
		lost = lost || sent
		time.Sleep(50 * time.Millisecond)
	}
}

// successorWait bounds how long a command waits for a successor daemon.
const successorWait = 15 * time.Second

// succeeding reports whether store's daemon has a supervisor alive that
// starts a successor when it dies.
func succeeding(store string) bool {
	st, err := ReadDaemonState(store)
	return err == nil && st.Supervisor > 0 && ProcessAlive(st.Supervisor)
}

// call sends req once; sent says whether it reached a daemon, rep is set
// when one answered.
func call(store string, req Request) (rep *Reply, sent bool, err error) {
	sock := SocketPath(store)
	addr, done, err := SockAddr(sock)
	if err != nil {
		return nil, false, Errorf(ErrNotMounted, "%v", err)
	}
	c, err := net.DialTimeout("unix", addr, 2*time.Second)
	done()
	if err != nil {
		return nil, false, Errorf(ErrNotMounted, "no ckfs daemon answers at %s (%v): run ckfs status to see why, or ckfs mount to start one", sock, err)
	}
	defer c.Close()
	// A window close hashes what the window wrote: allow for big files.
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	if err := json.NewEncoder(c).Encode(req.bound()); err != nil {
		return nil, false, fmt.Errorf("send to %s: %w", sock, err)
	}
	var r Reply
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&r); err != nil {
		return nil, true, fmt.Errorf("read reply from %s: %w", sock, err)
	}
	if !r.OK {
		return &r, true, errorOfCode(r.Code, r.Error)
	}
	return &r, true, nil
}

// FullLine says what a full store disk did, for status and doctor.
func (d *StatusInfo) FullLine() string {
	s := fmt.Sprintf("%d times the store's disk was full: writes whose pre-image could not be stored were refused (ENOSPC), changes whose post-image could not be stored are recorded as not restorable", d.StoreFull)
	if d.StoreFullNow {
		s += "; it is full NOW (since " + d.StoreFullSince.Local().Format("15:04:05") + "): free space on the store's disk, or run ckfs gc"
	}
	return s
}
