package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

func fdCount(t *testing.T, pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// The daemon resolves backing paths from its working directory, which is
// the backing directory under the in-place mount (not the mount, and not
// /proc/self/fd/N, whose lookup every path would pay): its cwd is the
// repository's path, and the files it serves are the repository's.
func TestDaemonServesFromTheBackingDirectory(t *testing.T) {
	w := mountWorkspace(t, "echo one > a.txt")
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", w.pid))
	if err != nil || cwd != w.root {
		t.Fatalf("daemon's working directory: %q, %v; want %s", cwd, err, w.root)
	}
	w.window("edit", `echo two >> a.txt && mkdir -p d/e && echo three > d/e/b.txt && mv d/e/b.txt c.txt && ln -s c.txt l`)
	if got := w.sh(`cat a.txt c.txt l && ls -d d/e`); got != "one\ntwo\nthree\nthree\nd/e\n" {
		t.Errorf("through the mount: %q", got)
	}
}

// The daemon must not leak file descriptors: many windows of many
// operations leave its descriptor count where it was.
func TestDaemonDoesNotLeakFDs(t *testing.T) {
	w := mountWorkspace(t, "")
	// The warm-up reads through the daemon too: go-fuse keeps a pool of
	// pipes (and /dev/null) for splicing replies, made at the first read.
	w.window("warm", `echo x > warm.txt && cat warm.txt >/dev/null && rm warm.txt`)
	before := fdCount(t, w.pid)
	for i := range 20 {
		w.window(fmt.Sprintf("w%d", i), `
for j in 1 2 3 4 5; do printf "$j" > f$j.txt; done
sed -i 's/1/one/' f1.txt
mkdir -p d && mv f2.txt d/ && rm -r d
ln -s f3.txt l && rm l
cat f4.txt > /dev/null`)
	}
	w.ckfs("flush")
	// Releases are asynchronous: give the kernel a moment to send them.
	after := 0
	for range 50 {
		if after = fdCount(t, w.pid); after <= before {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after > before {
		t.Errorf("daemon had %d descriptors before 20 windows and %d after", before, after)
	}
}

// TestDaemonKill kills the daemon with SIGKILL at random moments during a
// write-heavy workload, 30 times (CKFS_KILLS; the stress suite runs 50),
// cleans up the dead mount and remounts. After every kill the store
// verifies, the timeline loads, and for every change that reached the
// backing directory its pre-image is in the store. After every remount no
// window is left open (the one the daemon died in is closed as
// interrupted, with what it wrote), and checkpoints of windows closed
// before the kill restore byte-exact, and the rewind undoes byte-exact.
func TestDaemonKill(t *testing.T) {
	kills := 30
	if n, err := strconv.Atoi(os.Getenv("CKFS_KILLS")); err == nil && n > 0 {
		kills = n
	}
	if testing.Short() {
		kills = 5
	}
	const files = 8
	w := mountWorkspace(t, "")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	// The workload writes versions 1, 2, 3, ... of each file in turn, in
	// windows, and prints nothing; a version on disk proves the previous
	// version was replaced through the mount.
	script := fmt.Sprintf(`
i=$START
while :; do
  ckfs window open --id "k${RUN}_$i" >/dev/null 2>&1 || exit 0
  for f in $(seq 0 %d); do
    printf 'file %%d version %%d\n%%s' $f $i "$(head -c $((100*f)) /dev/zero | tr '\0' x)" > f$f.txt || exit 0
  done
  ckfs window close --id "k${RUN}_$i" >/dev/null 2>&1 || exit 0
  i=$((i+1))
done`, files-1)
	start := 1
	seen := map[int]string{} // content of each file at the previous check
	for k := range kills {
		c := exec.Command("sh", "-c", script)
		c.Dir = w.root
		c.Env = append(w.env(), "PATH="+filepath.Dir(ckfsBin)+":"+os.Getenv("PATH"), "START="+strconv.Itoa(start), "RUN="+strconv.Itoa(k))
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a random moment once the workload is writing.
		tl := filepath.Join(w.store, index.TimelineFile)
		st0, _ := os.Stat(tl)
		for i := 0; i < 500; i++ {
			if st, err := os.Stat(tl); err == nil && (st0 == nil || st.Size() > st0.Size()) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		w.killHard()
		c.Wait()
		// Dying takes a loaded machine a while (the FUSE connection is
		// torn down first); the store's lock goes with the process.
		for i := 0; i < 1000 && alive(w.pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(w.pid) {
			t.Fatalf("kill %d: daemon %d still alive 10 s after SIGKILL", k, w.pid)
		}
		reap(w.pid)
		if k == 0 {
			c := exec.Command(ckfsBin, "status", "--json", w.root)
			c.Dir, c.Env = filepath.Dir(w.root), w.env()
			out, _ := c.CombinedOutput()
			if !strings.Contains(string(out), `"state": "dead"`) || !strings.Contains(string(out), "ckfs mount "+w.root) {
				t.Errorf("status after the daemon was killed:\n%s", out)
			}
		}
		if k%2 == 0 {
			if out, err := w.ckfsErr("unmount", w.root); err != nil || !strings.Contains(out, "cleaned up") {
				t.Fatalf("kill %d: unmount of the dead mount: %v\n%s", k, err, out)
			}
			checkAfterKill(t, w, files, seen)
			// Remount and carry on from the highest version on disk.
			w.ckfs("mount", w.root)
		} else {
			// ckfs mount alone recovers: it detaches the dead mount and
			// mounts again.
			if out := w.ckfs("mount", w.root); !strings.Contains(out, "was gone: detached that mount, mounting again") || !strings.Contains(out, "mounted "+w.root) {
				t.Fatalf("kill %d: mount over the dead mount:\n%s", k, out)
			}
			checkAfterKill(t, w, files, seen)
		}
		w.refreshPids()
		restoreClosedCheckpoints(t, w, files, rng, k)
		start = highestVersion(t, w, files) + 1
	}
	if start < 3 {
		t.Fatalf("the workload never got going (highest version %d)", start-1)
	}
	t.Logf("%d kills; the workload reached version %d", kills, start-1)
}

// killContent is what the kill workload writes to file f in version i.
func killContent(f, i int) string {
	return fmt.Sprintf("file %d version %d\n%s", f, i, strings.Repeat("x", 100*f))
}

// restoreClosedCheckpoints checks, after a remount, that no window is left
// open and that the checkpoints of the last window closed before the kill
// and of a random earlier one restore byte-exact (and undo byte-exact).
func restoreClosedCheckpoints(t *testing.T, w *workspace, files int, rng *rand.Rand, kill int) {
	t.Helper()
	recs := w.records()
	var closed []index.Window
	for _, win := range index.Windows(recs) {
		if win.Close == nil {
			t.Fatalf("kill %d: window %s is still open after the remount", kill, win.ID)
		}
		if !win.Close.Interrupted() && strings.HasPrefix(win.ID, "k") {
			closed = append(closed, win)
		}
	}
	if len(closed) == 0 {
		return
	}
	picks := []index.Window{closed[len(closed)-1], closed[rng.IntN(len(closed))]}
	for _, win := range picks {
		var run, ver int
		fmt.Sscanf(win.ID, "k%d_%d", &run, &ver)
		before := map[int]string{}
		for f := range files {
			before[f] = w.read(fmt.Sprintf("f%d.txt", f))
		}
		if out, err := w.ckfsErr("rewind", "--files", "--to", strconv.FormatUint(win.Close.Seq, 10)); err != nil {
			t.Fatalf("kill %d: rewind to the close of %s (checkpoint %d): %v\n%s", kill, win.ID, win.Close.Seq, err, out)
		}
		changed := false
		for f := range files {
			got, want := w.read(fmt.Sprintf("f%d.txt", f)), killContent(f, ver)
			if got != want {
				t.Fatalf("kill %d: f%d.txt at the close of %s = %q, want %q", kill, f, win.ID, got[:min(len(got), 30)], want[:min(len(want), 30)])
			}
			changed = changed || got != before[f]
		}
		if !changed {
			continue // nothing to rewind, so nothing to undo
		}
		if out, err := w.ckfsErr("rewind", "--files", "--undo"); err != nil {
			t.Fatalf("kill %d: undo: %v\n%s", kill, err, out)
		}
		for f := range files {
			if got := w.read(fmt.Sprintf("f%d.txt", f)); got != before[f] {
				t.Fatalf("kill %d: undo left f%d.txt = %q, want %q", kill, f, got[:min(len(got), 30)], before[f][:min(len(before[f]), 30)])
			}
		}
	}
}

func highestVersion(t *testing.T, w *workspace, files int) int {
	hi := 0
	for f := range files {
		b, err := os.ReadFile(filepath.Join(w.root, fmt.Sprintf("f%d.txt", f)))
		if err != nil {
			continue
		}
		var ff, v int
		fmt.Sscanf(string(b), "file %d version %d", &ff, &v)
		hi = max(hi, v)
	}
	return hi
}

func checkAfterKill(t *testing.T, w *workspace, files int, seen map[int]string) {
	t.Helper()
	s, err := cas.Open(w.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Walk(func(i cas.Info) error { _, err := s.Get(i.Hash); return err }); err != nil {
		t.Fatalf("an object does not verify after a kill: %v", err)
	}
	recs, tail, err := index.Load(filepath.Join(w.store, index.TimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	if tail != nil && !tail.Torn {
		t.Fatalf("timeline has a bad line after a kill: %v", tail)
	}
	for _, r := range recs {
		if r.State != nil && r.Hash != "" {
			h, _ := cas.ParseHash(string(r.Hash))
			if ok, _ := s.Has(h); !ok {
				t.Fatalf("record %d names missing object %s", r.Seq, h)
			}
		}
	}
	// Native reads: the mount is gone. A file whose content changed since
	// the previous check was changed through the mount: the first of those
	// changes recorded the previous content as its pre-image.
	for f := range files {
		b, err := os.ReadFile(filepath.Join(w.root, fmt.Sprintf("f%d.txt", f)))
		if err != nil {
			continue
		}
		prev, ok := seen[f]
		seen[f] = string(b)
		if !ok || prev == string(b) {
			continue
		}
		h := cas.Sum([]byte(prev))
		if ok, _ := s.Has(h); !ok {
			var hist []string
			for _, r := range recs {
				if r.Path == fmt.Sprintf("f%d.txt", f) || r.Path == "" {
					h := "-"
					if r.State != nil {
						h = string(r.Hash)
					}
					hist = append(hist, fmt.Sprintf("%d %s %s %s", r.Seq, r.Kind, r.Window, h))
				}
			}
			t.Fatalf("f%d.txt changed from %q... but its pre-image %s is not in the store\n%s", f, prev[:min(len(prev), 20)], h, strings.Join(hist, "\n"))
		}
	}
}

// A path as long as the kernel allows (PATH_MAX - 1 bytes, relative to the
// repository, reached by changing directory on the way down) can be
// created, written, renamed and rewound through the mount: the daemon
// resolves it relative to its working directory, so no prefix of its own
// pushes it over the limit (serving through /proc/self/fd/N did, and
// pjdfstest's */03.t failed on it).
func TestPathsAsLongAsTheKernelAllows(t *testing.T) {
	w := mountWorkspace(t, "echo one > a.txt")
	// 15 directories of 255 bytes and a 255-byte name: 15*256 + 255 = 4095.
	name := func(c string) string { return strings.Repeat(c, 255) }
	descend := ""
	for i := range 15 {
		d := name(string(rune('a' + i)))
		descend += fmt.Sprintf("mkdir %s && cd %s && ", d, d)
	}
	w.window("deep", descend+"printf deep > "+name("x")+" && mv "+name("x")+" "+name("y")+" && cat "+name("y"))
	var deep string
	for i := range 15 {
		deep += name(string(rune('a'+i))) + "/"
	}
	deep += name("y")
	if len(deep) != 4095 {
		t.Fatalf("test path is %d bytes", len(deep))
	}
	if ch := w.changes("deep"); ch[deep][1] != "deep" {
		t.Fatalf("the deep file's change was not recorded with its content: %v", ch[deep])
	}
	w.ckfs("rewind", "--files", "--to", "deep")
	if _, err := os.Lstat(filepath.Join(w.root, name("a"))); !os.IsNotExist(err) {
		t.Fatalf("the deep tree is still there after the rewind: %v", err)
	}
	w.ckfs("rewind", "--files", "--undo")
	got := w.sh("cd " + filepath.Dir(deep) + " && cat " + name("y"))
	if got != "deep" {
		t.Fatalf("after undoing the rewind, the deep file holds %q", got)
	}
}
