package rewind_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"golang.org/x/sys/unix"
)

// ws is a workspace recorded by a real capture.Recorder (told about each
// change as the FUSE layer would) and rewound by the real applier.
type ws struct {
	t     *testing.T
	root  string
	store string
	cas   *cas.Local
	tl    *index.Writer
	rec   *capture.Recorder
	fd    int
}

func newWS(t *testing.T) *ws {
	t.Helper()
	return newWSWith(t, capture.Options{})
}

// newWSWith is newWS with the recorder's options (Store, Timeline and
// Source are set here).
func newWSWith(t *testing.T, o capture.Options) *ws {
	t.Helper()
	w := &ws{t: t, root: t.TempDir(), store: t.TempDir()}
	var err error
	if w.cas, err = cas.Open(w.store, nil); err != nil {
		t.Fatal(err)
	}
	if w.tl, _, err = index.OpenWriter(w.store, index.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.fd, err = unix.Open(w.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.tl.Close(); unix.Close(w.fd) })
	o.Store, o.Timeline, o.Source = w.cas, w.tl, capture.NewDirSource(w.fd)
	if w.rec, err = capture.New(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.rec.Close() }) // stops its post-image worker
	return w
}

func (w *ws) p(rel string) string { return filepath.Join(w.root, rel) }

// write writes a file as a tool would through the mount.
func (w *ws) write(rel, content string) {
	w.t.Helper()
	release, err := w.rec.WriterOpened(0, rel)
	w.must(err)
	os.MkdirAll(filepath.Dir(w.p(rel)), 0o755)
	w.must(os.WriteFile(w.p(rel), []byte(content), 0o644))
	release()
}

// beforeMount dates files written directly as files from before the
// mount are: older than its first checkpoint (a lazy baseline modified
// after a checkpoint is unknown there, index.StateAt). Their ctime, which
// nothing can set back, then has to fall behind the first checkpoint by
// more than the 20 ms StateAt allows the file system's coarser clock.
func (w *ws) beforeMount(rels ...string) {
	w.t.Helper()
	old := time.Now().Add(-time.Minute)
	for _, rel := range rels {
		w.must(os.Chtimes(w.p(rel), old, old))
	}
	time.Sleep(30 * time.Millisecond)
}

func (w *ws) remove(rel string) {
	w.t.Helper()
	w.must(w.rec.BeforeChange(0, rel))
	w.must(os.Remove(w.p(rel)))
}

func (w *ws) mkdir(rel string) {
	w.t.Helper()
	w.must(w.rec.BeforeChange(0, rel))
	w.must(os.Mkdir(w.p(rel), 0o755))
}

func (w *ws) window(id string, fn func()) (before, after uint64) {
	w.t.Helper()
	before, err := w.rec.OpenWindow(id, "test", "")
	w.must(err)
	fn()
	after, err = w.rec.CloseWindow(id)
	w.must(err)
	return before, after
}

func (w *ws) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *ws) records() []index.Record {
	w.t.Helper()
	w.must(w.rec.Flush())
	recs, _, err := index.Load(filepath.Join(w.store, index.TimelineFile))
	w.must(err)
	return recs
}

func (w *ws) env(hook func(int, rewind.PathAction) error) rewind.Env {
	return rewind.Env{
		Records: w.records(),
		Applier: &rewind.Applier{Store: w.cas, Dir: rewind.NewDir(w.fd), JournalDir: rewind.JournalDir(w.store),
			Root: w.root, Append: w.tl.Append, AfterAction: hook},
		Check: rewind.CheckInput{StoreRoot: w.root, WorkRoot: w.root},
	}
}

// snapshot describes the whole tree: type, mode and content of every path.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := d.Info()
		var st syscall.Stat_t
		syscall.Lstat(p, &st)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		case d.IsDir():
			out[rel] = fmt.Sprintf("dir %o", st.Mode&0o7777)
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %o %q", st.Mode&0o7777, b)
		}
		_ = info
		return nil
	})
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %s, want %s", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s, want absent", k, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// A scenario used by several tests: two windows and their snapshots.
func scenario(t *testing.T) (w *ws, cps []uint64, snaps []map[string]string) {
	w = newWS(t)
	os.WriteFile(w.p("a.txt"), []byte("a0\n"), 0o644)
	os.WriteFile(w.p("keep.txt"), []byte("keep\n"), 0o644)
	w.beforeMount("a.txt", "keep.txt")
	snap0 := snapshot(t, w.root)
	b1, a1 := w.window("w1", func() {
		w.write("a.txt", "a1\n")
		w.mkdir("d")
		w.write("d/new.txt", "new\n")
	})
	snap1 := snapshot(t, w.root)
	_, a2 := w.window("w2", func() {
		w.write("a.txt", "a2\n")
		w.remove("d/new.txt")
		w.must(w.rec.BeforeChange(0, "link"))
		w.must(os.Symlink("a.txt", w.p("link")))
	})
	snap2 := snapshot(t, w.root)
	return w, []uint64{b1, a1, a2}, []map[string]string{snap0, snap1, snap2}
}

func TestRewindToEveryCheckpointAndUndo(t *testing.T) {
	w, cps, snaps := scenario(t)
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}, {1, 2, 0, 0}} {
		for _, i := range order {
			before := snapshot(t, w.root)
			out, err := rewind.Run(w.env(nil), rewind.Request{Target: cps[i], Apply: true})
			if err != nil {
				t.Fatalf("rewind to %d: %v", cps[i], err)
			}
			sameTree(t, fmt.Sprintf("after rewind to checkpoint %d", cps[i]), snapshot(t, w.root), snaps[i])
			if len(out.Plan.Steps) > 0 {
				target, _, err := rewind.UndoTarget(w.records())
				w.must(err)
				if _, err := rewind.Run(w.env(nil), rewind.Request{Target: target, Apply: true}); err != nil {
					t.Fatalf("undo: %v", err)
				}
				sameTree(t, "after undo", snapshot(t, w.root), before)
				if _, err := rewind.Run(w.env(nil), rewind.Request{Target: cps[i], Apply: true}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestPreviewWritesNothing(t *testing.T) {
	w, cps, _ := scenario(t)
	before := snapshot(t, w.root)
	recsBefore, _ := os.ReadFile(filepath.Join(w.store, index.TimelineFile))
	out, err := rewind.Run(w.env(nil), rewind.Request{Target: cps[0]})
	if err != nil || out.Applied || len(out.Plan.Steps) == 0 {
		t.Fatalf("preview: %+v %v", out, err)
	}
	sameTree(t, "after a preview", snapshot(t, w.root), before)
	recsAfter, _ := os.ReadFile(filepath.Join(w.store, index.TimelineFile))
	if string(recsAfter) != string(recsBefore) {
		t.Error("a preview appended to the timeline")
	}
}

// Each safety check refuses the whole rewind and leaves every file
// byte-identical.
func TestSafetyChecksRefuse(t *testing.T) {
	cases := map[string]struct {
		prepare func(w *ws, env *rewind.Env)
		force   bool // --force lets it through
	}{
		"root": {prepare: func(w *ws, env *rewind.Env) { env.Check.StoreRoot = "/somewhere/else" }},
		"journal": {prepare: func(w *ws, env *rewind.Env) {
			rewind.WriteJournal(rewind.JournalDir(w.store), &rewind.Journal{V: 1, Op: "r-old", Root: w.root})
			env.Check.Pending, _ = rewind.PendingJournals(rewind.JournalDir(w.store))
		}},
		"windows": {prepare: func(w *ws, env *rewind.Env) { env.Check.OpenWindows = []string{"toolu_1"} }},
		"unrecorded changes": {prepare: func(w *ws, env *rewind.Env) {
			os.WriteFile(w.p("a.txt"), []byte("changed behind ckfs's back\n"), 0o644)
		}, force: true},
		"your own edits": {prepare: func(w *ws, env *rewind.Env) {
			w.write("a.txt", "my own edit\n") // no window open: an outside change
			env.Records = w.records()
		}, force: true},
		"unrecorded files in removed directories": {prepare: func(w *ws, env *rewind.Env) {
			os.WriteFile(w.p("d/untracked.txt"), []byte("not recorded\n"), 0o644)
		}},
		"stored content": {prepare: func(w *ws, env *rewind.Env) {
			flipObject(t, w.cas, cas.Sum([]byte("a0\n"))) // what a.txt goes back to
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w, cps, _ := scenario(t)
			env := w.env(nil)
			c.prepare(w, &env)
			before := snapshot(t, w.root)
			out, err := rewind.Run(env, rewind.Request{Target: cps[0], Apply: true})
			var re *rewind.RefusedError
			if !errors.As(err, &re) || !errors.Is(err, rewind.ErrRefused) {
				t.Fatalf("rewind was not refused: %v", err)
			}
			failed := ""
			for _, ch := range out.Report.Checks {
				if !ch.OK {
					failed = ch.Name
				}
			}
			if failed != name {
				t.Errorf("refused by %q, want %q", failed, name)
			}
			sameTree(t, "after a refused rewind", snapshot(t, w.root), before)
			if c.force != strings.Contains(err.Error(), "--force") || c.force != strings.Contains(err.Error(), "ckfs revert") || strings.Contains(err.Error(), "commit") {
				t.Errorf("the refusal names --force and a revert as ways out if and only if --force applies (it does: %v), and never a commit (ckfs checks none): %v", c.force, err)
			}
			if c.force {
				// The revert it offers takes out every window since the
				// target, the one the target is just before included.
				if got := strings.Join(out.WindowsSince, " "); got != "w1 w2" {
					t.Errorf("the windows since checkpoint %d (before w1) are %q, want w1 w2", cps[0], got)
				}
				if _, err := rewind.Run(env, rewind.Request{Target: cps[0], Apply: true, Force: true}); err != nil {
					t.Fatalf("--force: %v", err)
				}
				// What --force overwrote was captured: undo brings it back.
				target, _, _ := rewind.UndoTarget(w.records())
				if _, err := rewind.Run(w.env(nil), rewind.Request{Target: target, Apply: true, Force: true}); err != nil {
					t.Fatal(err)
				}
				sameTree(t, "after undoing a forced rewind", snapshot(t, w.root), before)
			}
		})
	}
}

func TestNewerMtimeOnlyWarns(t *testing.T) {
	w, cps, snaps := scenario(t)
	future := w.p("a.txt")
	now := unix.NsecToTimespec(1 << 62)
	unix.UtimesNanoAt(unix.AT_FDCWD, future, []unix.Timespec{now, now}, 0)
	out, err := rewind.Run(w.env(nil), rewind.Request{Target: cps[0], Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, c := range out.Report.Checks {
		if c.Name == "modification times" && c.Warn && len(c.Paths) == 1 {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no mtime warning: %+v", out.Report)
	}
	sameTree(t, "rewound", snapshot(t, w.root), snaps[0])
}

// A rewind that fails part way puts back at once what it had changed: the
// files are as they were, and no journal is left.
func TestFailureAtEveryStepIsRolledBack(t *testing.T) {
	atEveryStep(t, func(t *testing.T, w *ws, cps []uint64, hook func(int, rewind.PathAction) error, errno error, before map[string]string) {
		_, err := rewind.Run(w.env(hook), rewind.Request{Target: cps[0], Apply: true, Op: "r-fail"})
		var rb *rewind.RolledBackError
		if !errors.As(err, &rb) || !errors.Is(err, errno) || !strings.Contains(err.Error(), "the files are as they were") {
			t.Fatalf("failed rewind: %v", err)
		}
		sameTree(t, "after the failed rewind", snapshot(t, w.root), before)
		if p, _ := rewind.PendingJournals(rewind.JournalDir(w.store)); len(p) != 0 {
			t.Errorf("journal left after a rewind rolled back: %v", p)
		}
	})
}

// An apply that stops part way (the process killed, or a rollback that
// failed too) keeps the journal and blocks further rewinds; --rollback
// puts back exactly the pre-rewind tree.
func TestFailureAtEveryStepRollsBack(t *testing.T) {
	atEveryStep(t, func(t *testing.T, w *ws, cps []uint64, hook func(int, rewind.PathAction) error, errno error, before map[string]string) {
		err := w.applyStopped(cps[0], "r-fail", hook)
		var ae *rewind.ApplyError
		if !errors.As(err, &ae) || !errors.Is(err, errno) || !strings.Contains(err.Error(), "--rollback r-fail") {
			t.Fatalf("failed apply: %v", err)
		}
		pending, _ := rewind.PendingJournals(rewind.JournalDir(w.store))
		env := w.env(nil)
		env.Check.Pending = pending
		if _, err := rewind.Run(env, rewind.Request{Target: cps[1], Apply: true}); !errors.Is(err, rewind.ErrRefused) {
			t.Fatalf("a rewind ran while a journal was pending: %v", err)
		}
		if err := w.env(nil).Applier.Rollback("r-fail"); err != nil {
			t.Fatal(err)
		}
		sameTree(t, "after rollback", snapshot(t, w.root), before)
		if p, _ := rewind.PendingJournals(rewind.JournalDir(w.store)); len(p) != 0 {
			t.Errorf("journal left after rollback: %v", p)
		}
	})
}

// atEveryStep runs check in a fresh scenario (its checkpoints cps) once
// for every action of the rewind to cps[0] and each of ENOSPC and EACCES,
// with a hook that fails right after that action (or after the journal,
// -1) and the tree as it was before the rewind.
func atEveryStep(t *testing.T, check func(t *testing.T, w *ws, cps []uint64, hook func(int, rewind.PathAction) error, errno error, before map[string]string)) {
	w0, cps0, _ := scenario(t)
	n := len(must(rewind.MakePlan(w0.records(), cps0[0], rewind.NewDir(w0.fd))).Ordered())
	for k := -1; k < n; k++ {
		for _, errno := range []error{syscall.ENOSPC, syscall.EACCES} {
			t.Run(fmt.Sprintf("after op %d/%v", k, errno), func(t *testing.T) {
				w, cps, _ := scenario(t)
				check(t, w, cps, failAt(k, errno), errno, snapshot(t, w.root))
			})
		}
	}
}

// A rewind that fails part way and cannot be put back at once (here the
// stored copy of what it replaced is damaged meanwhile) keeps its journal
// and says both failures and the way out.
func TestFailedRewindWhoseRollbackFailsKeepsTheJournal(t *testing.T) {
	w, cps, _ := scenario(t)
	stop := errors.New("injected")
	_, err := rewind.Run(w.env(func(i int, op rewind.PathAction) error {
		if i == 0 {
			flipObject(t, w.cas, cas.Sum([]byte("a.txt"))) // the target of the removed symlink
			return stop
		}
		return nil
	}), rewind.Request{Target: cps[0], Apply: true, Op: "r-0003"})
	var ae *rewind.ApplyError
	if !errors.As(err, &ae) || !errors.Is(err, stop) || ae.Rollback == nil || !strings.Contains(err.Error(), "putting back what it changed failed too") || !strings.Contains(err.Error(), "--rollback r-0003") {
		t.Fatalf("a failed rewind whose rollback fails: %v", err)
	}
	if p, _ := rewind.PendingJournals(rewind.JournalDir(w.store)); len(p) != 1 {
		t.Errorf("pending journals %v, want r-0003's", p)
	}
}

// failAt is an AfterAction hook that fails after action k with err.
func failAt(k int, err error) func(int, rewind.PathAction) error {
	return func(i int, _ rewind.PathAction) error {
		if i == k {
			return err
		}
		return nil
	}
}

// applyStopped applies the rewind to target as operation op with the
// hook, through Apply alone: a failure leaves the journal, as a process
// killed part way does.
func (w *ws) applyStopped(target uint64, op string, hook func(int, rewind.PathAction) error) error {
	w.t.Helper()
	env := w.env(hook)
	return env.Applier.Apply(must(rewind.MakePlan(env.Records, target, env.Applier.Dir)), op)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Nothing is ever written outside the root: not through a symlink that
// points out, not through "..", not through an absolute path.
func TestHostilePathsAreRefused(t *testing.T) {
	w := newWS(t)
	outside := t.TempDir()
	os.Symlink(outside, w.p("esc"))
	d := rewind.NewDir(w.fd)
	for _, p := range []string{"esc/x", "../x", "/etc/x", "a/../../x", "esc"} {
		err := d.WriteFile(p, strings.NewReader("pwned"), 0o644)
		if p == "esc" {
			// Replacing the symlink itself is inside the root and allowed.
			if err != nil {
				t.Errorf("replace symlink esc: %v", err)
			}
			continue
		}
		if !errors.Is(err, rewind.ErrUnsafePath) {
			t.Errorf("WriteFile(%q): %v, want ErrUnsafePath", p, err)
		}
		if err := d.Remove(p); !errors.Is(err, rewind.ErrUnsafePath) {
			t.Errorf("Remove(%q): %v", p, err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("something was written outside the root: %v", ents)
	}
	for _, j := range []string{
		`{"v":1,"op":"r-1","target":0,"root":"/r","created":"2026-12-01T00:00:00Z","paths":[{"path":"../x","target":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"},"current":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}}]}`,
		`{"v":1,"op":"r-1","target":0,"root":"/r","created":"2026-12-01T00:00:00Z","paths":[{"path":"/etc/passwd","target":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"},"current":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}}]}`,
		`{"v":1,"op":"../../x","target":0,"root":"/r","created":"2026-12-01T00:00:00Z","paths":[]}`,
		`{"v":1,"op":"r-1","target":0,"root":"relative","created":"2026-12-01T00:00:00Z","paths":[]}`,
		`{"v":2,"op":"r-1","target":0,"root":"/r","created":"2026-12-01T00:00:00Z","paths":[]}`,
	} {
		if _, err := rewind.ParseJournal([]byte(j)); err == nil {
			t.Errorf("ParseJournal accepted %s", j)
		}
	}
	// A record path with a symlink component does not exist as recorded,
	// and nothing is written through it.
	os.Mkdir(w.p("real"), 0o755)
	os.Symlink("real", w.p("via"))
	if st, err := d.State("via/x"); err != nil || st.Type != index.TypeAbsent {
		t.Errorf("State through an in-root symlink: %+v %v", st, err)
	}
	if err := d.WriteFile("via/x", strings.NewReader("x"), 0o644); !errors.Is(err, rewind.ErrUnsafePath) {
		t.Errorf("WriteFile through an in-root symlink: %v", err)
	}
	if ents, _ := os.ReadDir(w.p("real")); len(ents) != 0 {
		t.Errorf("written through the symlink: %v", ents)
	}
}

// flipObject damages the object file of h in place.
func flipObject(t *testing.T, s *cas.Local, h cas.Hash) {
	t.Helper()
	p := s.Path(h)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

// The content a rewind overwrites is its undo. If the store holds that
// content only as a damaged object, the rewind must store it afresh (a
// dedup hit never trusts damaged bytes) and verify it before it overwrites
// the file; then undo brings the file back byte-exact.
func TestRewindNeverTrustsADamagedUndoObject(t *testing.T) {
	w, cps, snaps := scenario(t)
	flipObject(t, w.cas, cas.Sum([]byte("a2\n"))) // a.txt now; only the disk holds it intact
	if _, err := rewind.Run(w.env(nil), rewind.Request{Target: cps[1], Apply: true}); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	sameTree(t, "after the rewind", snapshot(t, w.root), snaps[1])
	if err := w.cas.Verify(cas.Sum([]byte("a2\n"))); err != nil {
		t.Fatalf("the undo content was not stored afresh: %v", err)
	}
	target, _, err := rewind.UndoTarget(w.records())
	w.must(err)
	if _, err := rewind.Run(w.env(nil), rewind.Request{Target: target, Apply: true}); err != nil {
		t.Fatalf("undo: %v", err)
	}
	sameTree(t, "after undo", snapshot(t, w.root), snaps[2])
}

// A rollback whose journal names damaged content refuses before it writes.
func TestRollbackRefusesDamagedContent(t *testing.T) {
	w, cps, _ := scenario(t)
	stop := errors.New("injected")
	if err := w.applyStopped(cps[0], "r-0001", failAt(0, stop)); !errors.Is(err, stop) {
		t.Fatalf("apply: %v", err)
	}
	before := snapshot(t, w.root)
	flipObject(t, w.cas, cas.Sum([]byte("a.txt"))) // the target of the removed symlink
	env := w.env(nil)
	err := env.Applier.Rollback("r-0001")
	var oe *rewind.ObjectError
	if !errors.As(err, &oe) || !errors.Is(err, rewind.ErrRefused) || !strings.Contains(err.Error(), "ckfs verify --repair") {
		t.Fatalf("rollback over damaged content: %v", err)
	}
	sameTree(t, "after a refused rollback", snapshot(t, w.root), before)
}

// A journal made for another root is never rolled back here.
func TestRollbackChecksTheJournalRoot(t *testing.T) {
	w, cps, _ := scenario(t)
	stop := errors.New("injected")
	if err := w.applyStopped(cps[0], "r-0002", failAt(0, stop)); !errors.Is(err, stop) {
		t.Fatalf("apply: %v", err)
	}
	before := snapshot(t, w.root)
	env := w.env(nil)
	env.Applier.Root = "/somewhere/else"
	if err := env.Applier.Rollback("r-0002"); !errors.Is(err, rewind.ErrRefused) || !strings.Contains(err.Error(), w.root) {
		t.Fatalf("rollback with another root: %v", err)
	}
	sameTree(t, "after a refused rollback", snapshot(t, w.root), before)
	if err := w.env(nil).Applier.Rollback("r-0002"); err != nil {
		t.Fatalf("rollback where it was made: %v", err)
	}
}

// Names that are not UTF-8, and names near NAME_MAX, rewind byte-exact.
func TestRewindKeepsOddNames(t *testing.T) {
	w := newWS(t)
	names := []string{"caf\xe9.txt", strings.Repeat("n", 250), "line\nbreak", "\xff\xfe"}
	w.window("w1", func() {
		for _, n := range names {
			w.write(n, "v1\n")
		}
	})
	b, _ := w.window("w2", func() {
		for _, n := range names {
			w.write(n, "v2\n")
		}
	})
	if _, err := rewind.Run(w.env(nil), rewind.Request{Target: b, Apply: true}); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	for _, n := range names {
		if got, err := os.ReadFile(w.p(n)); err != nil || string(got) != "v1\n" {
			t.Errorf("%q after the rewind: %q, %v", n, got, err)
		}
	}
	ents, _ := os.ReadDir(w.root)
	if len(ents) != len(names) {
		t.Errorf("the rewind left %d names, want %d (temp files or wrongly named files)", len(ents), len(names))
	}
}

// A preview's outcome carries what each file's step does to its lines,
// and its diff when asked, so that nothing prints it by reading the
// store or the disk again; an applied rewind carries none.
func TestPreviewCarriesItsChanges(t *testing.T) {
	w := newWS(t)
	w.write("a.txt", "one\ntwo\n")
	before, _ := w.window("w1", func() { w.write("a.txt", "one\n2\nthree\n") })
	out, err := rewind.Run(w.env(nil), rewind.Request{Target: before, Describe: -1, Diff: true})
	if err != nil || len(out.Plan.Steps) != 1 {
		t.Fatalf("preview: %+v %v", out, err)
	}
	c := out.Plan.Steps[0].Change
	if c == nil || c.Added != 1 || c.Removed != 2 || c.Binary || !strings.Contains(c.Diff, "-three") || !strings.Contains(c.Diff, "+two") {
		t.Fatalf("change of a.txt: %+v", c)
	}
	if none, err := rewind.Run(w.env(nil), rewind.Request{Target: before}); err != nil || none.Plan.Steps[0].Change != nil {
		t.Fatalf("a preview that asks for no descriptions got %+v, %v", none.Plan.Steps[0].Change, err)
	}
	out, err = rewind.Run(w.env(nil), rewind.Request{Target: before, Describe: -1, Apply: true})
	if err != nil || !out.Applied || out.Plan.Steps[0].Change != nil {
		t.Fatalf("applied: %+v %v", out, err)
	}
}

// A file whose content was not stored (over the size limit, or the
// store's disk was full) and that nothing changed since the checkpoint
// needs nothing from a rewind to it: the plan leaves it out rather than
// say it cannot restore it. Changed since, it cannot be restored, and the
// plan says so.
func TestUnstoredFileUnchangedSinceIsNotReported(t *testing.T) {
	w := newWSWith(t, capture.Options{MaxFileSize: 64})
	big := strings.Repeat("x", 100)
	w.window("w1", func() { w.write("big.bin", big) })
	before2, _ := w.window("w2", func() { w.write("a.txt", "a\n") })
	plan := must(rewind.MakePlan(w.records(), before2, rewind.NewDir(w.fd)))
	if len(plan.CannotRestore) != 0 {
		t.Errorf("rewinding past a change of a.txt only: cannot restore %v, want nothing (big.bin is as it was)", plan.CannotRestore)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Path != "a.txt" {
		t.Errorf("steps %v, want a.txt's only", plan.Steps)
	}
	// Changed since the checkpoint (here behind ckfs's back): its state
	// there is not known, and the plan says so.
	w.must(os.WriteFile(w.p("big.bin"), []byte(big+"more"), 0o644))
	plan = must(rewind.MakePlan(w.records(), before2, rewind.NewDir(w.fd)))
	if len(plan.CannotRestore) != 1 || plan.CannotRestore[0].Path != "big.bin" {
		t.Errorf("big.bin changed since: cannot restore %v, want big.bin", plan.CannotRestore)
	}
	// Changed through the mount in a later window: the same.
	w.window("w3", func() { w.write("big.bin", big+"again") })
	plan = must(rewind.MakePlan(w.records(), before2, rewind.NewDir(w.fd)))
	if len(plan.CannotRestore) != 1 || plan.CannotRestore[0].Path != "big.bin" {
		t.Errorf("big.bin changed in w3: cannot restore %v, want big.bin", plan.CannotRestore)
	}
}

// fullStore is a store whose disk is full.
type fullStore struct{ cas.Store }

func (fullStore) Put([]byte) (cas.Hash, bool, error) { return "", false, syscall.ENOSPC }

// A rewind that cannot keep what it would overwrite, the store's disk
// being full, writes nothing and says so, with the way out.
func TestRewindOnAFullStoreChangesNothing(t *testing.T) {
	w, cps, _ := scenario(t)
	before := snapshot(t, w.root)
	env := w.env(nil)
	env.Applier.Store = fullStore{w.cas}
	_, err := rewind.Run(env, rewind.Request{Target: cps[0], Apply: true})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "nothing was changed: the store's disk is full") || !strings.Contains(err.Error(), "ckfs gc") {
		t.Fatalf("a rewind on a full store: %v", err)
	}
	sameTree(t, "after a rewind on a full store", snapshot(t, w.root), before)
	if p, _ := rewind.PendingJournals(rewind.JournalDir(w.store)); len(p) != 0 {
		t.Errorf("journal left: %v", p)
	}
}

// A journal that cannot be read back (cut short, or naming another
// operation) blocks every rewind, as any pending journal does; it cannot
// be rolled back, and the error says so and names --abandon, which sets
// it aside. A file in the journal folder whose name no rewind gives is
// not a journal.
func TestDamagedJournalCanBeSetAside(t *testing.T) {
	w, cps, _ := scenario(t)
	dir := rewind.JournalDir(w.store)
	w.must(os.MkdirAll(dir, 0o700))
	w.must(os.WriteFile(filepath.Join(dir, "r-deadbeef.json"), []byte(`{"v":1,"op":"r-deadbeef","paths":[{"path":"a`), 0o600))
	w.must(os.WriteFile(filepath.Join(dir, "my notes.json"), []byte("not a journal"), 0o600))
	pending, err := rewind.PendingJournals(dir)
	if err != nil || len(pending) != 1 || pending[0] != "r-deadbeef" {
		t.Fatalf("pending journals %v (%v), want r-deadbeef alone", pending, err)
	}
	err = w.env(nil).Applier.Rollback("r-deadbeef")
	var damaged *rewind.DamagedJournalError
	if !errors.As(err, &damaged) || !strings.Contains(err.Error(), "ckfs rewind --abandon r-deadbeef") {
		t.Fatalf("rollback of a damaged journal: %v", err)
	}
	before := snapshot(t, w.root)
	if err := w.env(nil).Applier.Abandon("r-deadbeef"); err != nil {
		t.Fatalf("abandon of a damaged journal: %v", err)
	}
	sameTree(t, "after setting a damaged journal aside", snapshot(t, w.root), before)
	if p, _ := rewind.PendingJournals(dir); len(p) != 0 {
		t.Errorf("pending journals after --abandon: %v", p)
	}
	if _, err := os.Stat(filepath.Join(dir, "r-deadbeef.json.damaged")); err != nil {
		t.Errorf("the damaged journal was not kept aside: %v", err)
	}
	if _, err := rewind.Run(w.env(nil), rewind.Request{Target: cps[0], Apply: true}); err != nil {
		t.Errorf("a rewind after the damaged journal was set aside: %v", err)
	}
}
