package integration

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

type gcOut struct {
	Watermark   uint64 `json:"watermark"`
	Previous    uint64 `json:"previous_watermark"`
	Checkpoints int    `json:"checkpoints"`
	Restorable  int    `json:"restorable"`
	Objects     int    `json:"objects"`
	Live        int    `json:"live_objects"`
	Deleted     int    `json:"deleted_objects"`
	Freed       int64  `json:"freed_bytes"`
	DryRun      bool   `json:"dry_run"`
}

func (w *workspace) gc(env []string, args ...string) gcOut {
	w.t.Helper()
	out, code := w.exitCode(env, append([]string{"gc", "--json"}, args...)...)
	var r gcOut
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		w.t.Fatalf("ckfs gc %v: exit %d, %v\n%s", args, code, err, out)
	}
	return r
}

// missingLive lists the objects the timeline's kept checkpoints need that
// are not in the store.
func (w *workspace) missingLive() []string {
	w.t.Helper()
	recs := w.records()
	wm, _ := index.Watermark(recs)
	s, err := cas.Open(w.store, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	var missing []string
	for h := range index.Live(recs, wm) {
		ch, _ := cas.ParseHash(string(h))
		if ok, _ := s.Has(ch); !ok {
			missing = append(missing, string(h))
		}
	}
	return missing
}

func countObjects(t *testing.T, store string) int {
	s, _ := cas.Open(store, nil)
	n := 0
	s.Walk(func(cas.Info) error { n++; return nil })
	return n
}

// ckfs gc end to end on a mount: a dry run changes nothing; a collection
// writes the watermark, frees what only old checkpoints needed, keeps the
// rest restorable byte for byte, and ckfs log and ckfs rewind explain a
// checkpoint below the watermark.
func TestGCCommand(t *testing.T) {
	w := newWorkspace(t, `printf 'v0\n' > a.txt`)
	w.extraEnv = []string{"CKFS_TEST_SWEEP_GRACE=-1h"} // the daemon collects
	w.mount()
	for i := 1; i <= 5; i++ {
		w.window(fmt.Sprintf("w%d", i), fmt.Sprintf(`printf 'v%d\n' > a.txt && printf 'n%d\n' > n%d.txt`, i, i, i))
	}
	before := countObjects(t, w.store)
	dry := w.gc(nil, "--dry-run", "--keep-last", "2")
	if !dry.DryRun || dry.Deleted == 0 || countObjects(t, w.store) != before {
		t.Fatalf("dry run: %+v; objects %d -> %d", dry, before, countObjects(t, w.store))
	}
	if wm, _ := index.Watermark(w.records()); wm != 0 {
		t.Fatalf("a dry run wrote a watermark %d", wm)
	}
	res := w.gc(nil, "--keep-last", "2")
	if res.Deleted != dry.Deleted || res.Restorable != 2 || countObjects(t, w.store) != before-res.Deleted {
		t.Fatalf("gc: %+v (dry run said %+v); objects %d -> %d", res, dry, before, countObjects(t, w.store))
	}
	if m := w.missingLive(); len(m) > 0 {
		t.Fatalf("gc deleted needed objects: %v", m)
	}
	if log := w.ckfs("log"); !strings.Contains(log, "no longer restorable") {
		t.Errorf("ckfs log does not show the watermark:\n%s", log)
	}
	out, code := w.exitCode(nil, "rewind", "--files", "--to", "w2")
	if code == 0 || !strings.Contains(out, "no longer restorable") || !strings.Contains(out, "oldest restorable checkpoint") {
		t.Errorf("rewind below the watermark: exit %d\n%s", code, out)
	}
	w.ckfs("rewind", "--files", "--to", "w4")
	if got := w.sh(`cat a.txt; ls`); got != "v3\na.txt\nn1.txt\nn2.txt\nn3.txt\n" {
		t.Errorf("after rewind to w4: %q", got)
	}
	w.ckfs("rewind", "--files", "--undo")
	if got := w.sh(`cat a.txt n5.txt`); got != "v5\nn5\n" {
		t.Errorf("after undo: %q", got)
	}
	if v := w.ckfs("verify"); !strings.Contains(v, "ok:") {
		t.Errorf("verify after gc:\n%s", v)
	}
	du := w.ckfs("du", "--json")
	var u struct {
		Objects  int     `json:"objects"`
		FullCopy int64   `json:"full_copy_bytes"`
		Saving   float64 `json:"saving_ratio"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(du), &u); err != nil || u.Objects != countObjects(t, w.store) || u.FullCopy == 0 || len(u.Files) == 0 {
		t.Errorf("du --json: %v\n%s", err, du)
	}
	if h := w.ckfs("du"); !strings.Contains(h, "largest files") || !strings.Contains(h, "a.txt") {
		t.Errorf("du:\n%s", h)
	}
}

// A collection killed after its n-th deletion, thirty times at random
// points, and run again: no object a kept checkpoint needs is ever lost,
// and the last run leaves a clean store whose oldest kept checkpoint
// rewinds byte for byte.
func TestGCKilledAndRerun(t *testing.T) {
	w := mountWorkspace(t, `printf 'base\n' > a.txt`)
	const windows = 40
	script := ""
	for i := 1; i <= windows; i++ {
		script += fmt.Sprintf("ckfs window open --id w%d; printf 'a%d\\n' > a.txt; printf 'b%d\\n' > b.txt; printf 'c%d\\n' > c%d.txt; ckfs window close --id w%d\n", i, i, i, i, i%7, i)
	}
	w.sh("PATH=" + filepath.Dir(ckfsBin) + ":$PATH\n" + script)
	w.unmount()
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for i := range 30 {
		keep := windows - 1 - i
		env := []string{"CKFS_TEST_SWEEP_GRACE=-1h", fmt.Sprintf("CKFS_TEST_GC_KILL_AT=%d", 1+rng.IntN(3))}
		out, code := w.exitCode(env, "gc", "--keep-last", fmt.Sprint(keep))
		if code != -1 && code != 0 {
			t.Fatalf("gc %d: exit %d\n%s", i, code, out)
		}
		if code == -1 {
			kills++
		}
		if m := w.missingLive(); len(m) > 0 {
			t.Fatalf("after gc run %d (killed: %v), needed objects are gone: %v", i, code == -1, m)
		}
	}
	if kills < 25 {
		t.Fatalf("only %d of 30 collections were killed midway", kills)
	}
	final := w.gc([]string{"CKFS_TEST_SWEEP_GRACE=-1h"}, "--keep-last", "10")
	if final.Restorable != 10 {
		t.Errorf("final gc: %+v", final)
	}
	if v, code := w.exitCode(nil, "verify"); code != 0 {
		t.Fatalf("verify after the killed collections: exit %d\n%s", code, v)
	}
	w.ckfs("rewind", "--files", "--to", "w31")
	if got := w.shIn(w.root, `cat a.txt b.txt`); got != "a30\nb30\n" {
		t.Errorf("rewind to the oldest kept checkpoint: %q", got)
	}
	t.Logf("%d of 30 collections killed midway", kills)
}

// Captures go on while collections sweep: windows keep bringing back
// contents that only old checkpoints named (so the store finds the object
// already there while the sweep may be deleting it). Nothing a kept
// checkpoint needs may be lost.
func TestGCConcurrentWithCapture(t *testing.T) {
	w := newWorkspace(t, `printf 'x\n' > a.txt`)
	w.extraEnv = []string{"CKFS_TEST_SWEEP_GRACE=-1h"}
	w.mount()
	var wg sync.WaitGroup
	wg.Add(1)
	errs := make(chan error, 1)
	go func() {
		defer wg.Done()
		script := "PATH=" + filepath.Dir(ckfsBin) + ":$PATH\n"
		for i := range 60 {
			script += fmt.Sprintf("ckfs window open --id c%d; for f in a b c d e f g h i j k l m n o p q r s t; do printf '%%s v%d\\n' $f > $f.txt; done; ckfs window close --id c%d\n", i, i%3, i)
		}
		c := exec.Command("sh", "-ec", script)
		c.Dir, c.Env = w.root, w.env()
		if out, err := c.CombinedOutput(); err != nil {
			errs <- fmt.Errorf("%v\n%s", err, out)
		}
	}()
	deleted := 0
	for i := range 40 {
		deleted += w.gc(nil, "--keep-last", "1").Deleted
		// A lost object is soon superseded by the next window: look now.
		if m := w.missingLive(); len(m) > 0 {
			t.Fatalf("collection %d while capturing lost needed objects: %v", i, m)
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	deleted += w.gc(nil, "--keep-last", "1").Deleted
	if m := w.missingLive(); len(m) > 0 {
		t.Fatalf("concurrent gc lost needed objects: %v", m)
	}
	if v, code := w.exitCode(nil, "verify"); code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, v)
	}
	w.ckfs("rewind", "--files", "--to", "c59")
	if got := w.sh(`cat a.txt t.txt`); got != "a v1\nt v1\n" {
		t.Errorf("rewind to the kept checkpoint: %q", got)
	}
	t.Logf("%d objects deleted while capturing", deleted)
}

// The configuration file: ckfs config show names where each value comes
// from, a repository override wins, mount honours excludes and refuses a
// disabled repository or a bad file with its line, and automatic
// collection runs after unmount.
func TestConfigAndAutoGC(t *testing.T) {
	w := newWorkspace(t, `printf 'v0\n' > a.txt`)
	if out, code := w.exitCode(nil, "config", "show"); code != 0 || !strings.Contains(out, "retention.keep           = 100") || !strings.Contains(out, "# default") {
		t.Fatalf("config show without a file: exit %d\n%s", code, out)
	}
	os.WriteFile(w.config, []byte("[retention]\nkeep = 7\nkepp = 3\n"), 0o644)
	if out, code := w.exitCode(nil, "mount", w.root); code == 0 || !strings.Contains(out, w.config+":3: unknown key \"retention.kepp\"") {
		t.Fatalf("mount with an unknown key: exit %d\n%s", code, out)
	}
	os.WriteFile(w.config, fmt.Appendf(nil, "[retention]\nkeep = 7\n\n[repo.%q.capture]\nenabled = false\n", w.root), 0o644)
	if out, code := w.exitCode(nil, "mount", w.root); code != 3 || !strings.Contains(out, "capture is disabled") || !strings.Contains(out, w.config+":5") {
		t.Fatalf("mount of a disabled repository: exit %d\n%s", code, out)
	}
	os.WriteFile(w.config, fmt.Appendf(nil, "[retention]\nkeep = 7\n\n[repo.%q.retention]\nkeep = 2\n\n[repo.%q.capture]\nexclude = [\"*.log\"]\n", w.root, w.root), 0o644)
	out := w.ckfs("config", "show")
	if !strings.Contains(out, "retention.keep           = 2") || !strings.Contains(out, w.config+":5") {
		t.Fatalf("config show with a repository override:\n%s", out)
	}
	w.mount()
	for i := 1; i <= 4; i++ {
		w.window(fmt.Sprintf("w%d", i), fmt.Sprintf(`printf 'v%d\n' > a.txt && printf 'l%d\n' > x.log`, i, i))
	}
	for _, r := range w.records() {
		if r.Path == "x.log" {
			t.Fatalf("x.log was captured despite exclude = [\"*.log\"]: %+v", r)
		}
	}
	w.unmount()
	wm, rec := index.Watermark(w.records())
	if wm == 0 || !strings.Contains(rec.Reason, "keep the last 2") {
		t.Fatalf("no automatic collection after unmount: watermark %d %+v", wm, rec)
	}
	os.WriteFile(w.config, fmt.Appendf(nil, "[retention]\nauto_gc = false\nkeep = 1\n"), 0o644)
	w.mount()
	w.window("w5", `printf 'v5\n' > a.txt`)
	w.unmount()
	if wm2, _ := index.Watermark(w.records()); wm2 != wm {
		t.Errorf("auto_gc = false still collected: watermark %d -> %d", wm, wm2)
	}
}

// With a size limit and automatic collection, the daemon collects on its
// own once the store passes the limit, while mounted.
func TestAutoGCAtSizeLimit(t *testing.T) {
	w := newWorkspace(t, ``)
	os.WriteFile(w.config, []byte("[retention]\nmax_size = \"64KiB\"\nkeep = 1000\n"), 0o644)
	w.extraEnv = []string{"CKFS_TEST_SIZE_CHECK_EVERY=0s", "CKFS_TEST_SWEEP_GRACE=-1h"}
	w.mount()
	for i := range 6 {
		// 32 KiB of incompressible content per window.
		w.window(fmt.Sprintf("w%d", i), `head -c 32768 /dev/urandom > blob.bin`)
	}
	var wm uint64
	for range 200 { // the daemon checks once a second
		if wm, _ = index.Watermark(w.records()); wm > 0 {
			break
		}
		w.sh("sleep 0.05")
	}
	if wm == 0 {
		t.Fatal("the daemon never collected a store past its size limit")
	}
	if m := w.missingLive(); len(m) > 0 {
		t.Fatalf("automatic collection lost needed objects: %v", m)
	}
}
