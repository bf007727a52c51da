package fusefs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// mounted is an in-process ckfs mount with a real store and recorder.
type mounted struct {
	t       *testing.T
	backing string // the directory served
	mnt     string // where it is mounted
	store   string
	rec     *capture.Recorder
	cas     *cas.Local
	// under is the backing directory opened before mounting: a way to
	// change files behind the mount.
	under int
}

// mount serves a fresh backing directory. inPlace mounts it over itself,
// in the cached model (as ckfs mount does by default).
func mount(t *testing.T, inPlace bool) *mounted {
	t.Helper()
	return mountWith(t, fusefs.Options{InPlace: inPlace, Cached: inPlace})
}

// mountWith is mount with the given options.
func mountWith(t *testing.T, o fusefs.Options) *mounted {
	t.Helper()
	inPlace := o.InPlace
	testenv.RequireFUSE(t)
	m := &mounted{t: t, backing: t.TempDir(), store: t.TempDir()}
	m.mnt = m.backing
	if !inPlace {
		m.mnt = t.TempDir()
	}
	s, err := cas.Open(m.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.cas = s
	tl, _, err := index.OpenWriter(m.store, index.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(m.backing, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.under = fd
	m.rec, err = capture.New(capture.Options{Store: s, Timeline: tl, Source: capture.NewDirSource(fd)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fusefs.New(fd, m.backing, m.rec)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := f.Mount(m.mnt, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", m.mnt, err)
		}
		m.rec.Close()
		tl.Close()
		unix.Close(fd)
	})
	return m
}

func (m *mounted) path(rel string) string { return filepath.Join(m.mnt, rel) }

func (m *mounted) records() []index.Record {
	m.t.Helper()
	if err := m.rec.Flush(); err != nil {
		m.t.Fatal(err)
	}
	recs, tail, err := index.Load(filepath.Join(m.store, index.TimelineFile))
	if err != nil || tail != nil {
		m.t.Fatalf("load timeline: %v %v", err, tail)
	}
	return recs
}

func (m *mounted) open(id string) {
	m.t.Helper()
	if _, err := m.rec.OpenWindow(id, "test", ""); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mounted) close(id string) {
	m.t.Helper()
	if _, err := m.rec.CloseWindow(id); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mounted) get(h index.Hash) string {
	m.t.Helper()
	ch, err := cas.ParseHash(string(h))
	if err != nil {
		m.t.Fatal(err)
	}
	b, err := m.cas.Get(ch)
	if err != nil {
		m.t.Fatal(err)
	}
	return string(b)
}

func TestCaptureThroughMount(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		name := map[bool]string{false: "separate", true: "in-place"}[inPlace]
		t.Run(name, func(t *testing.T) {
			m := mount(t, inPlace)
			if err := os.WriteFile(m.path("a.txt"), []byte("one\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			m.open("w1")
			if err := os.WriteFile(m.path("a.txt"), []byte("two\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Mkdir(m.path("d"), 0o755)
			os.WriteFile(m.path("d/new.txt"), []byte("new\n"), 0o644)
			m.close("w1")
			recs := m.records()
			var w1 []index.Record
			for _, r := range recs {
				if r.Window == "w1" && r.IsImage() {
					w1 = append(w1, r)
				}
			}
			paths := map[string]bool{}
			for _, r := range w1 {
				paths[r.Path] = true
			}
			if !paths["a.txt"] || !paths["d"] || !paths["d/new.txt"] {
				t.Errorf("w1's images cover %v, want a.txt, d and d/new.txt", paths)
			}
			open := index.Windows(recs)[0].Open.Seq
			closeSeq := index.Windows(recs)[0].Close.Seq
			before, after := index.StateAt(recs, open), index.StateAt(recs, closeSeq)
			if got := m.get(before["a.txt"].Hash); got != "one\n" {
				t.Errorf("a.txt before w1 = %q", got)
			}
			if got := m.get(after["a.txt"].Hash); got != "two\n" {
				t.Errorf("a.txt after w1 = %q", got)
			}
			if before["d"].Exists() || before["d/new.txt"].Exists() || after["d"].Type != index.TypeDir || m.get(after["d/new.txt"].Hash) != "new\n" {
				t.Errorf("created paths: before %+v / %+v, after %+v / %+v", before["d"], before["d/new.txt"], after["d"], after["d/new.txt"])
			}
			// The first write before any window is the user's own.
			if recs[0].Kind != index.KindOutside || recs[0].Path != "a.txt" {
				t.Errorf("first record %+v, want an outside record of a.txt", recs[0])
			}
			// And the backing directory holds the same bytes.
			if inPlace {
				return
			}
			b, _ := os.ReadFile(filepath.Join(m.backing, "a.txt"))
			if string(b) != "two\n" {
				t.Errorf("backing a.txt = %q", b)
			}
		})
	}
}
