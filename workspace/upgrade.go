package workspace

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Upgrade has the workspace's mount served by the ckfs binary now at the
// path the running one was started from (installed over it): capture is
// flushed, the daemon drained (Client.Drain), the supervisor retires it
// and starts a successor from
// that binary, which takes the live mount over as after a crash. It
// returns what happened, for the user.
func (w *Workspace) Upgrade() (string, error) {
	st, err := ReadDaemonState(w.Store)
	if err != nil || !ProcessAlive(st.PID) {
		return "", Errorf(ErrNotMounted, "%s is not mounted: ckfs mount %s runs the ckfs on your PATH", w.Root(), w.Root())
	}
	if st.Supervisor == 0 || !ProcessAlive(st.Supervisor) {
		return "", Errorf(ErrRefused, "this mount cannot be handed to a new daemon (ckfs doctor says why): run ckfs unmount %s and ckfs mount %s to use the new binary", st.Mountpoint, st.Mountpoint)
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", st.PID))
	if _, err := DaemonOf(w.Store).Flush(); err != nil {
		return "", fmt.Errorf("flush before the upgrade: %w", err)
	}
	// The directory operations in flight are answered and later ones
	// wait for the successor, so none is carried out twice. A daemon
	// from before draining answers "unknown op": it is retired as is
	// (its successor answers what it had done as done).
	if err := DaemonOf(w.Store).Drain(); err != nil && !strings.Contains(err.Error(), "unknown op") {
		return "", fmt.Errorf("drain before the upgrade: %w", err)
	}
	if err := syscall.Kill(st.Supervisor, syscall.SIGUSR1); err != nil {
		return "", fmt.Errorf("signal the supervisor (pid %d): %w", st.Supervisor, err)
	}
	deadline := time.Now().Add(successorWait)
	for time.Now().Before(deadline) {
		if now, err := ReadDaemonState(w.Store); err == nil && now.PID != st.PID && ProcessAlive(now.PID) {
			if _, err := DaemonOf(w.Store).Status(); err == nil {
				newExe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", now.PID))
				return fmt.Sprintf("daemon pid %d (%s) replaced by pid %d (%s); the mount stayed", st.PID, exe, now.PID, newExe), nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("no new daemon serves %s after %s; see %s", st.Mountpoint, successorWait, Layout(w.Store).DaemonLog())
}
