package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ws "github.com/ckfs-dev/ckfs/workspace"
)

// The daemon dies under a running workload (kill -9 at random moments)
// and the processes using the mount never notice: a shell whose working
// directory is the mount, and a writer making versions of files in
// windows through ckfs window open/close, see no error; a successor takes
// the same mount over each time. Afterwards no window is left open, and
// the checkpoints of windows closed before and after kills restore
// byte-exact. It reports the longest stall the shell saw.
// CKFS_TAKEOVER_KILLS sets the number of kills (the stress suite's long
// run uses 100).
func TestDaemonSurvivesKills(t *testing.T) {
	kills := 20
	if n, err := strconv.Atoi(os.Getenv("CKFS_TAKEOVER_KILLS")); err == nil && n > 0 {
		kills = n
	}
	if testing.Short() {
		kills = 5
	}
	const files = 6
	w := mountWorkspace(t, `printf 'keep\n' > keep.txt`)
	st := daemonState(t, w)
	if st.Supervisor == 0 {
		t.Skipf("this mount cannot outlive its daemon (kernel before 6.9, or no handleless mode): %s", st.IO)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	dir := t.TempDir()
	probeLog, writerLog := filepath.Join(dir, "probe.log"), filepath.Join(dir, "writer.log")
	probe := probeShell(w, probeLog)
	// The writer: versions of every file, one window a version.
	writer := exec.Command("sh", "-c", fmt.Sprintf(`i=1; while :; do
  ckfs window open --id "t_$i" >/dev/null || echo "ERR open t_$i"
  for f in $(seq 0 %d); do
    printf 'file %%d version %%d\n%%s' $f $i "$(head -c $((100*f)) /dev/zero | tr '\0' x)" > f$f.txt || echo "ERR write f$f $i"
  done
  ckfs window close --id "t_$i" >/dev/null || echo "ERR close t_$i"
  i=$((i+1))
done >> %s 2>&1`, files-1, writerLog))
	writer.Dir = w.root
	writer.Env = append(w.env(), "PATH="+filepath.Dir(ckfsBin)+":"+os.Getenv("PATH"))
	for _, c := range []*exec.Cmd{probe, writer} {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
	}
	pid := st.PID
	for k := range kills {
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
		pid = waitForSuccessor(t, w, pid, k)
	}
	time.Sleep(300 * time.Millisecond)
	for _, c := range []*exec.Cmd{probe, writer} {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		c.Wait()
	}
	for _, l := range []string{probeLog, writerLog} {
		b, _ := os.ReadFile(l)
		if strings.Contains(string(b), "ERR") || strings.Contains(string(b), "not connected") {
			t.Fatalf("a process using the mount saw an error across %d kills:\n%s\ndaemon log:\n%s", kills, errLines(string(b)), logProblems(w))
		}
	}
	stalls := probeStalls(t, probeLog)
	t.Logf("%d kills; the shell in the mount made %d rounds: a round took %v (median), the longest %v", kills, len(stalls)+1, stalls[len(stalls)/2], stalls[len(stalls)-1])
	if gaps := takeoverGaps(t, w); len(gaps) > 0 {
		t.Logf("from a worker's death to its successor serving: median %v, worst %v (%d takeovers)", gaps[len(gaps)/2], gaps[len(gaps)-1], len(gaps))
	}
	// The writer was killed inside a window: close what is open (such a
	// window did not write every file, so it is not checked).
	cut := map[string]bool{}
	for _, id := range w.status().Daemon.OpenWindows {
		w.ckfs("window", "close", "--id", id)
		cut[id] = true
	}
	checkTakeoverWindows(t, w, files, rng, cut)
}

// takeoverGaps are, sorted, the times the daemon log shows from the
// supervisor seeing a worker die to the successor serving.
func takeoverGaps(t *testing.T, w *workspace) []time.Duration {
	b, _ := os.ReadFile(filepath.Join(w.store, "daemon.log"))
	var died time.Time
	var gaps []time.Duration
	for _, l := range strings.Split(string(b), "\n") {
		var e struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		switch {
		case strings.HasPrefix(e.Msg, "the worker died"):
			died = e.Time
		case e.Msg == "took the mount over" && !died.IsZero():
			gaps = append(gaps, e.Time.Sub(died))
			died = time.Time{}
		}
	}
	slices.Sort(gaps)
	return gaps
}

// probeShell is a shell whose working directory is the mount: every 5 ms
// a write, a read back and a listing, relative to it; a timestamp a round
// in log, and ERR lines for what failed.
func probeShell(w *workspace, log string) *exec.Cmd {
	probe := exec.Command("sh", "-c", `i=0; while :; do
  i=$((i+1))
  echo $i > probe.txt || echo "ERR write $?"
  got=$(cat probe.txt); [ "$got" = "$i" ] || echo "ERR read $i: got '$got', then '$(cat probe.txt)', size $(stat -c %s probe.txt)"
  ls > /dev/null || echo "ERR ls $?"
  date +%s%N
  sleep 0.005
done >> `+log+` 2>&1`)
	probe.Dir = w.root
	return probe
}

// daemonState reads the workspace's daemon.json.
func daemonState(t *testing.T, w *workspace) ws.DaemonState {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.store, "daemon.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st ws.DaemonState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitForSuccessor waits until a daemon other than old serves the mount,
// and returns its pid.
func waitForSuccessor(t *testing.T, w *workspace, old, k int) int {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if st := daemonState(t, w); st.PID != old && alive(st.PID) {
			if out, err := w.ckfsErr("status", "--json"); err == nil && strings.Contains(out, `"state": "mounted"`) {
				return st.PID
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("kill %d: no successor serves the mount 10 s after daemon %d was killed:\n%s", k, old, lastLog(w))
	return 0
}

func lastLog(w *workspace) string {
	b, _ := os.ReadFile(filepath.Join(w.store, "daemon.log"))
	return lastLines(string(b), 15)
}

// logProblems are the daemon log's lines that are not about a takeover
// going as it should.
func logProblems(w *workspace) string {
	b, _ := os.ReadFile(filepath.Join(w.store, "daemon.log"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"level":"ERROR"`) || (strings.Contains(l, `"level":"WARN"`) && !strings.Contains(l, "a successor takes") && !strings.Contains(l, "reconciled")) {
			out = append(out, l)
		}
	}
	return lastLines(strings.Join(out, "\n"), 20)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

func errLines(s string) string {
	var out []string
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, "ERR") || strings.Contains(l, "not connected") {
			out = append(out, lines[max(0, i-1)], l)
		}
	}
	return strings.Join(out[:min(len(out), 20)], "\n")
}

// probeStalls are the gaps between the shell's rounds, sorted.
func probeStalls(t *testing.T, log string) []time.Duration {
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	var gaps []time.Duration
	for _, l := range strings.Fields(string(b)) {
		ns, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			continue
		}
		if last != 0 {
			gaps = append(gaps, time.Duration(ns-last))
		}
		last = ns
	}
	if len(gaps) < 10 {
		t.Fatalf("the shell in the mount made only %d rounds", len(gaps))
	}
	slices.Sort(gaps)
	return gaps
}

// checkTakeoverWindows checks that no window is open and that the close
// of the last window and of a few random ones restore every file to that
// window's version, byte-exact.
func checkTakeoverWindows(t *testing.T, w *workspace, files int, rng *rand.Rand, cut map[string]bool) {
	t.Helper()
	closed := map[uint64]int{} // close seq -> version
	var seqs []uint64
	for _, r := range w.records() {
		if r.Kind == "close" && strings.HasPrefix(r.Window, "t_") && r.Reason == "" && !cut[r.Window] {
			v, _ := strconv.Atoi(strings.TrimPrefix(r.Window, "t_"))
			closed[r.Seq] = v
			seqs = append(seqs, r.Seq)
		}
	}
	for _, id := range w.status().Daemon.OpenWindows {
		t.Fatalf("window %s is open after the workload", id)
	}
	if len(seqs) < 3 {
		t.Fatalf("only %d windows closed", len(seqs))
	}
	picks := []uint64{seqs[len(seqs)-1], seqs[rng.IntN(len(seqs))], seqs[rng.IntN(len(seqs))]}
	for _, seq := range picks {
		// The shell's probe.txt is written alongside: only the writer's
		// files are rewound.
		args := []string{"rewind", "--files", "--to", strconv.FormatUint(seq, 10), "--"}
		for f := range files {
			args = append(args, fmt.Sprintf("f%d.txt", f))
		}
		if out, err := w.ckfsErr(args...); err != nil {
			t.Fatalf("rewind to checkpoint %d: %v\n%s", seq, err, out)
		}
		for f := range files {
			if got, want := w.read(fmt.Sprintf("f%d.txt", f)), killContent(f, closed[seq]); got != want {
				for _, r := range w.records() {
					if r.Seq+80 > seq && r.Seq <= seq && (r.Path == fmt.Sprintf("f%d.txt", f) || r.Path == "") {
						size := int64(-1)
						if r.State != nil {
							size = r.State.Size
						}
						t.Logf("record %d %s %s %s %s size %d", r.Seq, r.Kind, r.Window, r.Path, r.Reason, size)
					}
				}
				t.Log(lastLog(w))
				t.Fatalf("f%d.txt at checkpoint %d (close of t_%d) = %q, want %q", f, seq, closed[seq], got[:min(len(got), 30)], want[:min(len(want), 30)])
			}
		}
	}
}

// ckfs upgrade, 20 times, alternating between two different builds
// installed over the path the mount was started from: each time a daemon
// of the binary now at the path serves the same mount, a shell inside it
// sees nothing, and a window open across all of them keeps every write.
func TestUpgradeToAFreshBinary(t *testing.T) {
	upgrades := 20
	if testing.Short() {
		upgrades = 3
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "ckfs")
	builds := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	os.MkdirAll(filepath.Dir(bin), 0o755)
	copyFile(t, ckfsBin, builds[0])
	if out, err := exec.Command("go", "build", "-ldflags=-s", "-o", builds[1], "../cmd/ckfs").CombinedOutput(); err != nil {
		t.Fatalf("build a second ckfs: %v\n%s", err, out)
	}
	copyFile(t, builds[0], bin)
	w := newWorkspace(t, `printf 'keep\n' > keep.txt`)
	run := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = w.root, w.env()
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("ckfs %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mount", w.root)
	w.refreshPids()
	t.Cleanup(w.unmount)
	if w.sup == 0 {
		t.Skip("this mount cannot outlive its daemon (kernel before 6.9)")
	}
	probeLog := filepath.Join(dir, "probe.log")
	probe := probeShell(w, probeLog)
	probe.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-probe.Process.Pid, syscall.SIGKILL); probe.Wait() })
	run("window", "open", "--id", "up", "--tool", "Bash")
	for i := range upgrades {
		src := builds[(i+1)%2]
		copyFile(t, src, bin+".new")
		if err := os.Rename(bin+".new", bin); err != nil {
			t.Fatal(err)
		}
		if out := run("upgrade", w.root); !strings.Contains(out, "replaced by pid") {
			t.Fatalf("upgrade %d: %s", i, out)
		}
		w.refreshPids()
		var exe, want syscall.Stat_t
		syscall.Stat(fmt.Sprintf("/proc/%d/exe", w.pid), &exe)
		syscall.Stat(bin, &want)
		if exe.Ino != want.Ino {
			t.Fatalf("upgrade %d: the daemon runs inode %d, not the binary installed (%d)", i, exe.Ino, want.Ino)
		}
		w.sh(fmt.Sprintf("printf '%d\\n' >> up.txt", i))
	}
	run("window", "close", "--id", "up")
	syscall.Kill(-probe.Process.Pid, syscall.SIGKILL)
	probe.Wait()
	if b, _ := os.ReadFile(probeLog); strings.Contains(string(b), "ERR") {
		t.Fatalf("the shell in the mount saw an error across %d upgrades:\n%s", upgrades, errLines(string(b)))
	}
	if got := strings.Count(w.read("up.txt"), "\n"); got != upgrades {
		t.Fatalf("up.txt has %d lines, want %d", got, upgrades)
	}
	if n := strings.Count(w.ckfs("log", "--all", "--oneline"), "up  Bash"); n != upgrades+1 {
		t.Errorf("the window shows in %d parts, want %d", n, upgrades+1)
	}
	w.ckfs("rewind", "--files", "--to", "up", "--", "up.txt")
	if _, err := os.Stat(filepath.Join(w.root, "up.txt")); !os.IsNotExist(err) {
		t.Fatalf("up.txt after a rewind to before the window: %v", err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A request the daemon carried out and died before answering comes again
// to its successor (FUSE_NOTIFY_RESEND), which answers it as the first
// delivery would have been: mkdir, a new file, a symlink, a hard link, rm,
// rmdir, mv, an exclusive setxattr and a removexattr each succeed once,
// with no "File exists" or "No such file",
// and leave what they asked for. The daemon dies under each
// (CKFS_TEST_DIE_AFTER: once it has made the change, before its reply).
func TestResentRequestsSucceed(t *testing.T) {
	for _, tc := range []struct{ op, cmd, check string }{
		{"mkdir", "mkdir d", "test -d d"},
		{"mknod", "echo hi > n.txt", `[ "$(cat n.txt)" = hi ]`},
		{"symlink", "ln -s keep.txt l", `[ "$(readlink l)" = keep.txt ]`},
		{"link", "ln keep.txt h", `[ "$(stat -c %h keep.txt)" = 2 ] && [ "$(cat h)" = keep ]`},
		{"unlink", "rm gone.txt", "test ! -e gone.txt"},
		{"rmdir", "rmdir empty", "test ! -e empty"},
		{"rename", "mv keep.txt moved.txt", `test ! -e keep.txt && [ "$(cat moved.txt)" = keep ]`},
		{"setxattr", `python3 -c 'import os; os.setxattr("keep.txt", "user.k", b"v", os.XATTR_CREATE)'`, `python3 -c 'import os; assert os.getxattr("keep.txt", "user.k") == b"v"'`},
		{"removexattr", `python3 -c 'import os; os.removexattr("attr.txt", "user.k")'`, `python3 -c 'import os; assert os.listxattr("attr.txt") == []'`},
	} {
		t.Run(tc.op, func(t *testing.T) {
			t.Parallel() // each its own workspace and daemon
			w := newWorkspace(t, `printf 'keep\n' > keep.txt; : > gone.txt; mkdir empty; : > attr.txt; python3 -c 'import os; os.setxattr("attr.txt", "user.k", b"v")'`)
			marker := filepath.Join(t.TempDir(), "died")
			w.extraEnv = append(w.extraEnv, "CKFS_TEST_DIE_AFTER="+tc.op+":"+marker)
			w.mount()
			if st := daemonState(t, w); st.Supervisor == 0 {
				t.Skipf("this mount cannot outlive its daemon (kernel before 6.9, or no handleless mode): %s", st.IO)
			}
			first := w.pid
			c := exec.Command("sh", "-c", tc.cmd)
			c.Dir = w.root
			if out, err := c.CombinedOutput(); err != nil {
				b, _ := os.ReadFile(filepath.Join(w.store, "daemon.log"))
				t.Fatalf("%s, with the daemon killed after carrying it out: %v\n%s\ndaemon log:\n%s", tc.cmd, err, out, b)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the daemon did not die after %s: %v", tc.op, err)
			}
			waitForSuccessor(t, w, first, 0)
			w.refreshPids()
			w.sh(tc.check)
		})
	}
}

// An upgrade drains the daemon first: a directory operation in flight is
// answered by the old daemon, not carried out again by the new one. The
// test holds an exchanging rename's reply back 2 s (CKFS_TEST_SLOW_OP)
// and upgrades meanwhile; done twice, the exchange would undo itself.
func TestUpgradeDrainsTheDaemon(t *testing.T) {
	w := newWorkspace(t, `printf 'a\n' > a.txt; printf 'b\n' > b.txt`)
	w.extraEnv = append(w.extraEnv, "CKFS_TEST_SLOW_OP=rename:2s")
	w.mount()
	if w.sup == 0 {
		t.Skip("this mount cannot outlive its daemon (kernel before 6.9)")
	}
	first := w.pid
	swap := exec.Command("python3", "-c", `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b"a.txt", -100, b"b.txt", 2) != 0:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))`)
	swap.Dir = w.root
	var out bytes.Buffer
	swap.Stdout, swap.Stderr = &out, &out
	if err := swap.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the exchange is done, its reply held back
	if up := w.ckfs("upgrade", w.root); !strings.Contains(up, "replaced by pid") {
		t.Fatalf("upgrade: %s", up)
	}
	if err := swap.Wait(); err != nil {
		t.Fatalf("the exchange across the upgrade: %v\n%s", err, out.String())
	}
	w.refreshPids()
	if w.pid == first {
		t.Fatal("the upgrade left the same daemon")
	}
	// On disk, beneath the kernel's caches (which saw one exchange
	// whatever the daemons did).
	a, _ := os.ReadFile(filepath.Join(w.behindDir(), "a.txt"))
	b, _ := os.ReadFile(filepath.Join(w.behindDir(), "b.txt"))
	if string(a) != "b\n" || string(b) != "a\n" {
		t.Fatalf("after one exchange across an upgrade a.txt holds %q and b.txt %q on disk: the exchange was done twice (or not at all)", a, b)
	}
	if w.read("a.txt") != string(a) || w.read("b.txt") != string(b) {
		t.Fatalf("the mount shows a.txt %q and b.txt %q, the disk %q and %q", w.read("a.txt"), w.read("b.txt"), a, b)
	}
}
