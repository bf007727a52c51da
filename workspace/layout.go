// Package workspace is the client side of a workspace: where its store is
// and what the store holds (Layout, Find, Init, the mounts table), the
// control protocol's types and client (Call, Request), the timeline as
// people read it (View, log, diff), and the set-up of what runs against a
// store — rewinds and reverts, conversation forks at marks, verify,
// collection — with a workspace's status. Every error carries a kind
// (ErrUsage, ErrRefused, ErrNotMounted, ErrBusy) that the CLI turns into
// an exit code. It never links the mount: a command talks to the daemon
// over the control socket.
package workspace

import (
	"path/filepath"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/session"
)

// Layout names every file of a store (docs/format.md, section 1). The
// packages that own a file's format name it too (index.TimelineFile,
// session.MarksFile, rewind.JournalDir); Layout is where the rest of ckfs
// finds them all.
type Layout string

// Meta is store.json: the store's version and the workspace it serves.
func (l Layout) Meta() string { return filepath.Join(string(l), "store.json") }

// Objects is the object tree.
func (l Layout) Objects() string { return filepath.Join(string(l), "objects") }

// Packs is the directory of packs: objects stored a batch to a file.
func (l Layout) Packs() string { return filepath.Join(string(l), "packs") }

// Timeline is the file timeline; TimelineCache its derived cache.
func (l Layout) Timeline() string      { return filepath.Join(string(l), index.TimelineFile) }
func (l Layout) TimelineCache() string { return index.CachePath(l.Timeline()) }

// Marks and Sessions are the conversation timeline.
func (l Layout) Marks() string    { return filepath.Join(string(l), session.MarksFile) }
func (l Layout) Sessions() string { return session.Dir(string(l)) }

// Journals holds pending rewind journals; Quarantine what verify --repair
// took out.
func (l Layout) Journals() string   { return rewind.JournalDir(string(l)) }
func (l Layout) Quarantine() string { return filepath.Join(string(l), "quarantine") }

// DaemonState, Socket and DaemonLog belong to a running daemon.
func (l Layout) DaemonState() string { return filepath.Join(string(l), "daemon.json") }
func (l Layout) Socket() string      { return filepath.Join(string(l), "control.sock") }
func (l Layout) DaemonLog() string   { return filepath.Join(string(l), "daemon.log") }

// NodeJournal and OpenWindows let a successor daemon take a live mount
// over: the node ids the kernel holds, and the windows open with their
// agents.
func (l Layout) NodeJournal() string { return filepath.Join(string(l), "nodes.journal") }
func (l Layout) OpenWindows() string { return filepath.Join(string(l), "open-windows.json") }

// MappedWrites exists once the daemon has served a write from the page
// cache (a shared memory mapping written back): from then on a boundary's
// client looks for mappings to wait for (syncMount).
func (l Layout) MappedWrites() string { return filepath.Join(string(l), "mapped-writes") }

// HookLog is where agent hooks report problems; AgentSettings the
// settings file ckfs agent NAME passes to the agent for one run.
func (l Layout) HookLog() string { return filepath.Join(string(l), "hook.log") }
func (l Layout) AgentSettings(agent string) string {
	return filepath.Join(string(l), "agent", agent+"-settings.json")
}

// Remotes is the store's remotes and its workspace id in them (ckfs
// remote add).
func (l Layout) Remotes() string { return filepath.Join(string(l), "remotes.json") }

// Views holds the open read-only views of checkpoints: one <pid>.json
// each, and the default mountpoints (at-<seq>).
func (l Layout) Views() string { return filepath.Join(string(l), "views") }
