package workspace

import (
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/rewind"
)

// The operations of the control protocol, as Request.Op names them; the
// daemon answers exactly these.
const (
	OpOpen     = "open"     // open a window
	OpClose    = "close"    // close a window
	OpFlush    = "flush"    // record what is being written; reply with the last seq
	OpStatus   = "status"   // the daemon's counters
	OpUnmount  = "unmount"  // finish capture, unmount, exit
	OpRewind   = "rewind"   // run a rewind or revert inside the daemon
	OpRollback = "rollback" // roll a journalled rewind back
	OpAbandon  = "abandon"  // forget an unfinished rewind's journal
	OpGC       = "gc"       // collect
	OpDrain    = "drain"    // answer the directory operations in flight, hold back new ones (before an upgrade)
)

// Client is the typed client of a workspace's daemon: a method for each
// operation of the control protocol, over Call.
type Client struct{ store string }

// DaemonOf returns the client of the daemon that serves store.
func DaemonOf(store string) Client { return Client{store} }

// Window is what opens a window.
type Window struct {
	ID    string // the window's id (a tool call's id)
	Tool  string // the tool, for ckfs log
	Label string // one line, for ckfs log
	// Agent is the agent process running the call and Command its shell
	// command, to match writes to calls that run at the same time.
	Agent   int
	Command string
	// Marked: the call's processes carry CKFS_WINDOW=ID in their
	// environment (ckfs run).
	Marked bool
}

// OpenWindow opens a window; the reply names it and its first seq.
func (c Client) OpenWindow(w Window) (*Reply, error) {
	return Call(c.store, Request{Op: OpOpen, ID: w.ID, Tool: w.Tool, Label: w.Label, Agent: w.Agent, Command: w.Command, Marked: w.Marked})
}

// CloseWindow closes the window id; reason says why a call that never
// finished is closed ("" for one that did).
func (c Client) CloseWindow(id, reason string) (*Reply, error) {
	return Call(c.store, Request{Op: OpClose, ID: id, Reason: reason})
}

// Flush has the daemon record what is being written, and returns the
// timeline's last seq after it.
func (c Client) Flush() (uint64, error) {
	rep, err := Call(c.store, Request{Op: OpFlush})
	if err != nil {
		return 0, err
	}
	return rep.Seq, nil
}

// Drain readies the daemon to be retired by an upgrade: it answers the
// directory operations in flight and holds new ones back for its
// successor. A daemon from before this operation refuses it as unknown.
func (c Client) Drain() error {
	_, err := Call(c.store, Request{Op: OpDrain})
	return err
}

// Status returns the daemon's counters.
func (c Client) Status() (*StatusInfo, error) {
	rep, err := Call(c.store, Request{Op: OpStatus})
	if err != nil {
		return nil, err
	}
	return rep.Status, nil
}

// Rewind runs req in the daemon, to the checkpoint spec names when it is
// not nil, and returns what the target is, for people. A refused rewind
// returns its outcome and a *rewind.RefusedError.
func (c Client) Rewind(req rewind.Request, spec *TargetSpec) (*rewind.Outcome, string, error) {
	rep, err := Call(c.store, Request{Op: OpRewind, Rewind: &req, Target: spec})
	switch {
	case rep != nil && rep.Refused:
		return rep.Outcome, rep.What, &rewind.RefusedError{Report: rep.Outcome.Report}
	case rep != nil:
		return rep.Outcome, rep.What, err
	}
	return nil, "", err
}

// Journal rolls back (OpRollback) or abandons (OpAbandon) the journalled
// rewind op in the daemon.
func (c Client) Journal(name, op string) error {
	_, err := Call(c.store, Request{Op: name, RewindOp: op})
	return err
}

// Collect runs a collection in the daemon.
func (c Client) Collect(g GCRequest) (*gc.Result, error) {
	rep, err := Call(c.store, Request{Op: OpGC, GC: &g})
	if err != nil {
		return nil, err
	}
	return rep.GC, nil
}

// Unmount has the daemon finish capture, unmount and exit; it returns once
// the daemon has answered, before it has exited.
func (c Client) Unmount() error {
	_, err := Call(c.store, Request{Op: OpUnmount})
	return err
}
