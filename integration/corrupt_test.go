package integration

import (
	"os"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
)

// flipObject damages one stored object in place, as a disk error would.
func (w *workspace) flipObject(content string) {
	w.t.Helper()
	s, err := cas.Open(w.store, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	p := s.Path(cas.Sum([]byte(content)))
	b, err := os.ReadFile(p)
	if err != nil {
		w.t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, b, 0o444); err != nil {
		w.t.Fatal(err)
	}
}

// The reported data loss, on a real mount: the only stored copy of a
// file's content is damaged while the file itself is intact. Capturing the
// same content again repairs the object, and a rewind that removes the
// file keeps bytes that verify, so --undo brings it back byte-exact.
func TestCorruptObjectNeverCostsTheFileOnDisk(t *testing.T) {
	w := mountWorkspace(t, `printf 'base\n' > keep.txt`)
	w.window("w1", `printf 'precious\n' > new.txt`)
	w.flipObject("precious\n")
	// The same content captured again (a copy of the file) must not keep
	// the corrupt object as its dedup hit.
	w.window("w2", `cp new.txt copy.txt`)
	out := w.ckfs("rewind", "--files", "--to", "w1")
	if got := w.read("new.txt"); !strings.Contains(got, "no such file") {
		t.Fatalf("new.txt after the rewind to before w1 = %q\n%s", got, out)
	}
	w.ckfs("rewind", "--files", "--undo")
	if got := w.read("new.txt"); got != "precious\n" {
		t.Fatalf("undo did not bring new.txt back: %q", got)
	}
	if out, code := w.exitCode(nil, "verify"); code != 0 {
		t.Fatalf("verify after the rewind and undo: exit %d\n%s", code, out)
	}
}

// A rewind whose target content is damaged is refused before anything is
// written (exit 3), naming the object and the repair command; after
// verify --repair recovers it from the file that still holds it, the
// rewind goes through (a recorded file, twin.txt, still holds the content).
func TestRewindRefusesDamagedTarget(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt`)
	w.window("w1", `printf 'v0\n' > twin.txt && printf 'v1\n' > a.txt`)
	w.flipObject("v0\n")
	before := w.sh("ls -l --time-style=full-iso; cat a.txt")
	out, code := w.exitCode(nil, "rewind", "--files", "--to", "w1")
	if code != 3 || !strings.Contains(out, "stored content") || !strings.Contains(out, cas.Sum([]byte("v0\n")).String()) || !strings.Contains(out, "ckfs verify --repair") {
		t.Fatalf("rewind over a damaged object: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "--force") {
		t.Errorf("the refusal suggests --force, which cannot help:\n%s", out)
	}
	if got := w.sh("ls -l --time-style=full-iso; cat a.txt"); got != before {
		t.Fatalf("a refused rewind changed the workspace:\n%s\nwas\n%s", got, before)
	}
	if out, code := w.exitCode(nil, "rewind", "--to", "w1"); code != 3 || !strings.Contains(out, "stored content") {
		t.Errorf("the preview of a refused rewind: exit %d (want 3), or it does not show the failing check:\n%s", code, out)
	}
	w.ckfs("verify", "--repair")
	w.ckfs("rewind", "--files", "--to", "w1")
	if got := w.read("a.txt"); got != "v0\n" {
		t.Fatalf("a.txt after repair and rewind = %q", got)
	}
	w.ckfs("rewind", "--files", "--undo")
	if got := w.read("twin.txt"); got != "v0\n" {
		t.Fatalf("twin.txt after undo = %q", got)
	}
}

// log and gc never call lost content "collected" or checkpoints
// "restorable" when the store lost what they need.
func TestLogAndGCReportLostContent(t *testing.T) {
	w := mountWorkspace(t, `printf 'a0\n' > a.txt && printf 'b0\n' > b.txt`)
	w.window("w1", `printf 'a1\n' > a.txt && printf 'b1\n' > b.txt`)
	s, err := cas.Open(w.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(s.Path(cas.Sum([]byte("a1\n")))) // missing
	p := s.Path(cas.Sum([]byte("b1\n")))       // damaged header
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("XXXX"), 0o444)
	log := w.ckfs("log")
	if strings.Contains(log, "collected") || !strings.Contains(log, "content missing") || !strings.Contains(log, "content damaged") {
		t.Errorf("log:\n%s", log)
	}
	out := w.ckfs("gc", "--dry-run")
	if strings.Contains(out, "stay restorable") || !strings.Contains(out, "1 object they need is missing and 1 is damaged") {
		t.Errorf("gc --dry-run:\n%s", out)
	}
}

// Undo never silently throws away work done since the rewind: it refuses
// (exit 3, nothing changed) and says how to go on; with --force the work
// is captured first, so undoing that brings it back.
func TestUndoKeepsWorkDoneSince(t *testing.T) {
	w := mountWorkspace(t, `printf 'v0\n' > a.txt && printf 'b0\n' > b.txt`)
	w.window("w1", `printf 'v1\n' > a.txt`)
	w.ckfs("rewind", "--files", "--to", "w1")
	w.window("w2", `printf 'b-new work\n' > b.txt`)
	out, code := w.exitCode(nil, "rewind", "--files", "--undo")
	if code != 3 || !strings.Contains(out, "b.txt") || !strings.Contains(out, "--force") {
		t.Fatalf("undo over later work: exit %d\n%s", code, out)
	}
	if w.read("a.txt") != "v0\n" || w.read("b.txt") != "b-new work\n" {
		t.Fatalf("a refused undo changed files: a=%q b=%q", w.read("a.txt"), w.read("b.txt"))
	}
	w.ckfs("rewind", "--files", "--undo", "--force")
	if w.read("a.txt") != "v1\n" || w.read("b.txt") != "b0\n" {
		t.Fatalf("forced undo: a=%q b=%q", w.read("a.txt"), w.read("b.txt"))
	}
	w.ckfs("rewind", "--files", "--undo")
	if w.read("b.txt") != "b-new work\n" {
		t.Fatalf("the work a forced undo overwrote did not come back: %q", w.read("b.txt"))
	}
}
