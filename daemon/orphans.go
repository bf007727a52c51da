package daemon

import (
	"errors"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/proc"
)

// closeOrphanedWindows closes, as unfinished, every open window whose
// agent process has exited (killed, crashed, its terminal closed): such a
// call never reports back, and while its window stayed open every rewind
// was refused until the user closed it by hand. Closing it credits
// nothing differently: a window that knows its agent owns only the writes
// of the agent's descendants, and a process of the call that outlives the
// agent (reparented, with the agent's run id) writes as the closed
// window's continuation, as any background command does. A window opened
// by hand names no agent and is left alone, as is an agent this daemon
// may not signal.
func (d *daemon) closeOrphanedWindows() {
	closed := false
	for _, w := range d.rec.OpenWindowInfo() {
		if w.Agent.PID <= 0 || !proc.Exited(w.Agent.PID) {
			continue
		}
		if _, err := d.rec.CloseWindowReason(w.ID, index.ReasonUnfinished); err != nil {
			if !errors.Is(err, capture.ErrNoWindow) && !errors.Is(err, capture.ErrClosed) {
				d.log.Error("close the window of an agent that exited", "window", w.ID, "err", err)
			}
			continue
		}
		d.log.Info("closed the window of an agent that exited", "window", w.ID, "agent", w.Agent.PID)
		closed = true
	}
	if closed {
		d.writeOpenWindows()
		d.up.poke()
	}
}
