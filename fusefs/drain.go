package fusefs

import (
	"sync"
	"time"
)

// opGate holds back the requests that are not safe to carry out twice
// (the directory operations resent handles) while an upgrade retires the
// daemon: Drain closes it and waits for those in flight to be answered,
// and the requests that come after wait at the gate, unread by the file
// system, until the daemon is killed and the kernel resends them to its
// successor, which carries them out once. So an upgrade redoes none of
// them (a RENAME_EXCHANGE, which done twice undoes itself, included).
type opGate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	closed bool
	n      int // in flight
}

func newOpGate() *opGate {
	g := &opGate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// enter waits while the gate is closed, then counts a request in flight.
func (g *opGate) enter() {
	g.mu.Lock()
	for g.closed {
		g.cond.Wait()
	}
	g.n++
	g.mu.Unlock()
}

// leave counts a request answered.
func (g *opGate) leave() {
	g.mu.Lock()
	g.n--
	g.mu.Unlock()
}

// drain closes the gate and waits, at most wait, until nothing is in
// flight; it reports whether that happened. The gate opens again by
// itself after reopen, should the daemon not be retired after all.
func (g *opGate) drain(wait, reopen time.Duration) bool {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	time.AfterFunc(reopen, g.open)
	for deadline := time.Now().Add(wait); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		n := g.n
		g.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// open lets requests through again.
func (g *opGate) open() {
	g.mu.Lock()
	g.closed = false
	g.cond.Broadcast()
	g.mu.Unlock()
}

// Drain readies the daemon to be retired by an upgrade: the directory
// operations in flight are answered (at most wait), and those after them
// wait until the daemon is gone and the kernel gives them to its
// successor (opGate). It reports whether every one in flight was
// answered; a mount that cannot be taken over has nothing to drain.
func (f *FS) Drain(wait time.Duration) bool {
	if f.gate == nil {
		return true
	}
	return f.gate.drain(wait, drainReopen)
}

// drainReopen is how long a drained daemon that is not retired holds its
// directory operations back.
const drainReopen = 15 * time.Second
