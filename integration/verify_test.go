package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

type verifyOut struct {
	Corrupt      []string `json:"corrupt_objects"`
	Missing      []string `json:"missing_objects"`
	Tail         string   `json:"timeline_tail"`
	Orphans      []string `json:"orphan_temp_files"`
	Unrestorable []uint64 `json:"unrestorable_checkpoints"`
	Repaired     []string `json:"repaired"`
	Unrepaired   []string `json:"unrepaired"`
	ConvTails    []string `json:"conversation_tails"`
	Clean        bool     `json:"clean"`
}

// ckfs verify finds a flipped bit, a truncated object, a missing object, a
// torn timeline line and a stale temp file, each planted here, and
// --repair handles each as documented: a corrupt object whose content a
// workspace file still holds is recovered from it, one no file holds is
// moved to quarantine.
func TestVerifyFindsPlantedFaults(t *testing.T) {
	w := mountWorkspace(t, `printf 'a0\n' > a.txt && printf 'b0\n' > b.txt && printf 'c0\n' > c.txt && printf 'd0\n' > d.txt`)
	w.window("w1", `printf 'a1\n' > a.txt && printf 'b1\n' > b.txt && printf 'c1\n' > c.txt && printf 'd1\n' > d.txt`)
	w.window("w2", `printf 'd2\n' > d.txt`)
	if out := w.ckfs("verify"); !strings.Contains(out, "ok: every object verifies") {
		t.Fatalf("verify of a healthy store while mounted:\n%s", out)
	}
	w.unmount()
	s, _ := cas.Open(w.store, nil)
	obj := func(content string) string { return s.Path(cas.Sum([]byte(content))) }
	plant := func(path string, fn func([]byte) []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644)
		os.WriteFile(path, fn(b), 0o444)
	}
	plant(obj("a1\n"), func(b []byte) []byte { b[len(b)-1] ^= 1; return b }) // flipped bit
	plant(obj("b1\n"), func(b []byte) []byte { return b[:10] })              // truncated
	os.Remove(obj("c1\n"))                                                   // missing
	plant(obj("d1\n"), func(b []byte) []byte { b[len(b)-1] ^= 1; return b }) // flipped, and no file holds d1 now
	tl := filepath.Join(w.store, index.TimelineFile)
	f, _ := os.OpenFile(tl, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"seq":99,"ti`) // torn
	f.Close()
	mf, _ := os.OpenFile(filepath.Join(w.store, "marks.jsonl"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	mf.WriteString("{\"v\":1,\"mark\":1,\"time\":\"2026-12-02T09:00:00Z\",\"files\":3}\n{\"v\":1,\"ma") // torn
	mf.Close()
	stale := filepath.Join(w.store, "tmp", "obj-stale")
	os.WriteFile(stale, []byte("half an object"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)

	out, code := w.exitCode(nil, "verify", "--json")
	var r verifyOut
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 {
		t.Fatalf("verify: exit %d, %v\n%s", code, err, out)
	}
	if len(r.Corrupt) != 3 || len(r.Missing) != 1 || !strings.Contains(r.Tail, "torn") || len(r.Orphans) != 1 || len(r.ConvTails) != 1 || r.Clean {
		t.Fatalf("verify found %+v", r)
	}
	if len(r.Unrestorable) == 0 {
		t.Errorf("no checkpoint reported unrestorable: %+v", r)
	}
	// For people, the failure names the flag that mends it.
	if out, code := w.exitCode(nil, "verify"); code != 1 || !strings.Contains(out, "ckfs verify --repair fixes what can be fixed") {
		t.Errorf("verify: exit %d, the way out not named:\n%s", code, out)
	}
	// d1's content is gone with it: the repair says what it could not
	// mend and exits 1.
	out, code = w.exitCode(nil, "verify", "--repair", "--json")
	json.Unmarshal([]byte(out), &r)
	if code != 1 || len(r.Unrepaired) != 1 || !strings.Contains(r.Unrepaired[0], cas.Sum([]byte("d1\n")).String()) {
		t.Errorf("verify --repair with an object lost: exit %d, not repaired %q", code, r.Unrepaired)
	}
	joined := strings.Join(r.Repaired, "\n")
	for _, want := range []string{"recovered corrupt object", "moved corrupt object", "removed orphan temp file", "timeline: moved 1 bad line(s) to", "cut the torn last line of " + filepath.Join(w.store, "marks.jsonl")} {
		if !strings.Contains(joined, want) {
			t.Errorf("--repair did not report %q:\n%s", want, joined)
		}
	}
	if strings.Count(joined, "recovered corrupt object") != 2 || !strings.Contains(joined, "from a.txt") || !strings.Contains(joined, "from b.txt") {
		t.Errorf("--repair did not recover a1 and b1 from the workspace:\n%s", joined)
	}
	if !strings.Contains(joined, "recovered missing object "+cas.Sum([]byte("c1\n")).String()+" from c.txt") {
		t.Errorf("--repair did not recover the missing c1 from c.txt:\n%s", joined)
	}
	if _, err := os.Stat(filepath.Join(w.store, "quarantine", cas.Sum([]byte("d1\n")).Hex())); err != nil {
		t.Errorf("the unrecoverable object is not in quarantine: %v", err)
	}
	if got, err := s.Get(cas.Sum([]byte("a1\n"))); err != nil || string(got) != "a1\n" {
		t.Errorf("a1 after recovery: %q, %v", got, err)
	}
	// After the repair only the lost object is missing: d1 quarantined;
	// the recovered ones (c1 among them) verify; nothing else is wrong.
	out, _ = w.exitCode(nil, "verify", "--json")
	r = verifyOut{}
	json.Unmarshal([]byte(out), &r)
	if len(r.Corrupt) != 0 || len(r.Missing) != 1 || r.Tail != "" || len(r.Orphans) != 0 || len(r.ConvTails) != 0 {
		t.Errorf("after --repair: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(w.root, "a.txt")); string(b) != "a1\n" {
		t.Errorf("verify touched the workspace: a.txt = %q", b)
	}
}

// One bad line in the middle of the timeline (garbage, a duplicate seq, a
// huge line) stops mount, log and rewind, each naming the line and the
// repair; verify --repair moves the bad lines to quarantine verbatim, and
// then everything works again with every good record kept.
func TestBadTimelineLinesAreQuarantined(t *testing.T) {
	w := mountWorkspace(t, `printf 'a0\n' > a.txt`)
	w.window("w1", `printf 'a1\n' > a.txt`)
	w.window("w2", `printf 'a2\n' > a.txt`)
	w.unmount()
	tl := filepath.Join(w.store, index.TimelineFile)
	b, _ := os.ReadFile(tl)
	lines := strings.SplitAfter(string(b), "\n")
	mid := len(lines) / 2
	planted := strings.Join(lines[:mid], "") + "garbage, not a record\n" + lines[mid-1] + `{"v":1,"x":"` + strings.Repeat("z", 3<<20) + "\"}\n" + strings.Join(lines[mid:], "")
	os.WriteFile(tl, []byte(planted), 0o600)
	for _, args := range [][]string{{"mount", w.root}, {"log"}, {"rewind", "--to", "w1"}} {
		out, code := w.exitCode(nil, args...)
		if code == 0 || !strings.Contains(out, fmt.Sprintf("line %d", mid+1)) || !strings.Contains(out, "ckfs verify --repair") {
			t.Errorf("ckfs %s with a bad line: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	out := w.ckfs("verify", "--repair")
	if !strings.Contains(out, "moved 3 bad line(s)") {
		t.Fatalf("verify --repair:\n%s", out)
	}
	if out, code := w.exitCode(nil, "verify"); code != 0 {
		t.Fatalf("verify after the repair: exit %d\n%s", code, out)
	}
	ents, _ := filepath.Glob(filepath.Join(w.store, "quarantine", "snapshots-*.lines"))
	if len(ents) != 1 {
		t.Fatalf("quarantine files: %v", ents)
	}
	if q, _ := os.ReadFile(ents[0]); !strings.Contains(string(q), "garbage, not a record") || len(q) < 3<<20 {
		t.Errorf("the quarantine does not hold the bad lines verbatim (%d bytes)", len(q))
	}
	w.mount()
	w.ckfs("rewind", "--files", "--to", "w2")
	if got := w.read("a.txt"); got != "a1\n" {
		t.Errorf("a.txt after the repair and a rewind to before w2: %q", got)
	}
}

// The pre-images of a tree deleted in batches are kept in packs. A pack
// whose index is damaged is reported by ckfs verify, with the checkpoints
// that need its objects; --repair moves it to quarantine whole and
// recovers the objects it held from the workspace files that hold them
// again.
func TestVerifyFindsADamagedPack(t *testing.T) {
	w := mountWorkspace(t, `mkdir old && for f in $(seq 200); do echo "old file $f" > old/f$f; done`)
	w.window("rm", "rm -rf old")
	w.ckfs("rewind", "--files", "--to", "rm")
	w.unmount()
	packs, _ := filepath.Glob(filepath.Join(w.store, "packs", "*.pack"))
	if len(packs) == 0 {
		t.Fatal("no pack after deleting 200 files from before the mount")
	}
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-40] ^= 1 // in the trailer's digest of the index
	os.Chmod(packs[0], 0o644)
	if err := os.WriteFile(packs[0], b, 0o444); err != nil {
		t.Fatal(err)
	}
	out, code := w.exitCode(nil, "verify", "--json")
	var r struct {
		verifyOut
		Damaged []string `json:"damaged_packs"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 {
		t.Fatalf("verify: exit %d, %v\n%s", code, err, out)
	}
	if len(r.Damaged) != 1 || !strings.Contains(r.Damaged[0], packs[0]) || len(r.Missing) == 0 || r.Clean {
		t.Fatalf("verify of a damaged pack found %+v", r)
	}
	out, _ = w.exitCode(nil, "verify", "--repair")
	if !strings.Contains(out, "moved damaged pack") || !strings.Contains(out, "recovered missing object") {
		t.Fatalf("verify --repair:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(w.store, "quarantine", filepath.Base(packs[0]))); err != nil {
		t.Errorf("the damaged pack is not in quarantine: %v", err)
	}
	if out := w.ckfs("verify"); !strings.Contains(out, "ok: every object verifies") {
		t.Fatalf("verify after the repair:\n%s", out)
	}
}
