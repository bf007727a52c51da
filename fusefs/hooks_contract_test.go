package fusefs_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/ckfs-dev/ckfs/fusefs"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// fakeHooks is the contract fusefs keeps with capture, checked without
// capture: every hook call records what the backing directory held at that
// moment (a pre-image must see the disk before the change), and a path in
// refuse makes the hook fail.
type fakeHooks struct {
	disk    int // the backing directory, opened before the mount covered it
	mu      sync.Mutex
	calls   []hookCall
	refuse  map[string]bool
	pending int // changes begun whose done has not been called
}

type hookCall struct {
	kind, rel string
	seen      string // the backing path's content (or "<absent>", "<dir>") at the call
}

var errRefused = errors.New("refused by the fake hooks")

// look is what the disk itself holds at rel: read from the descriptor
// taken before the mount, never through the mount (which is in place).
func (h *fakeHooks) look(rel string) string {
	var st unix.Stat_t
	if err := unix.Fstatat(h.disk, rel, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "<absent>"
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "<dir>"
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		n, _ := unix.Readlinkat(h.disk, rel, buf)
		return "<link " + string(buf[:max(n, 0)]) + ">"
	}
	fd, err := unix.Openat(h.disk, rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "<unreadable>"
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

func (h *fakeHooks) note(kind, rel string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, hookCall{kind, rel, h.look(rel)})
	if h.refuse[rel] {
		return errRefused
	}
	return nil
}

func (h *fakeHooks) done() func() {
	h.mu.Lock()
	h.pending++
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.pending--
			h.mu.Unlock()
		})
	}
}

func (h *fakeHooks) BeginChange(pid uint32, rel string) (func(), error) {
	if err := h.note("change", rel); err != nil {
		return nil, err
	}
	return h.done(), nil
}

func (h *fakeHooks) BeginRename(pid uint32, src, dst string, exchange bool) (func(), error) {
	if err := h.note("rename-from", src); err != nil {
		return nil, err
	}
	if err := h.note("rename-to", dst); err != nil {
		return nil, err
	}
	return h.done(), nil
}

func (h *fakeHooks) WriterOpened(pid uint32, rel string) (func(), error) {
	if err := h.note("writer", rel); err != nil {
		return nil, err
	}
	return func() {}, nil
}

func (h *fakeHooks) Renamed(oldRel, newRel string, exchange bool) {}

// count is how many calls the hooks have had.
func (h *fakeHooks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

// firstSince returns the first call since the n-th that named rel.
func (h *fakeHooks) firstSince(n int, rel string) (hookCall, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.calls[n:] {
		if c.rel == rel {
			return c, true
		}
	}
	return hookCall{}, false
}

func mountFake(t *testing.T, o fusefs.Options) (*fakeHooks, string) {
	t.Helper()
	testenv.RequireFUSE(t)
	backing := t.TempDir()
	fd, err := unix.Open(backing, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHooks{disk: fd, refuse: map[string]bool{}}
	f, err := fusefs.New(fd, backing, h)
	if err != nil {
		t.Fatal(err)
	}
	o.InPlace = true
	srv, err := f.Mount(backing, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.CloseWriteFds()
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		unix.Close(fd)
	})
	return h, backing
}

// Every mutation asks the hooks first, about the path it changes, while
// the disk still holds what was there; a refusal fails the operation and
// leaves the disk as it was; and every change begun is done once the
// operation returns. Both I/O models keep it.
func TestHooksContract(t *testing.T) {
	for _, model := range []struct {
		name string
		o    fusefs.Options
	}{{"cached", fusefs.Options{Cached: true}}, {"passthrough", fusefs.Options{}}} {
		t.Run(model.name, func(t *testing.T) {
			h, dir := mountFake(t, model.o)
			p := func(rel string) string { return filepath.Join(dir, rel) }
			if err := os.WriteFile(p("f"), []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Mkdir(p("d"), 0o755)
			ops := []struct {
				name, rel, before string
				op                func() error
			}{
				{"overwrite", "f", "old", func() error { return os.WriteFile(p("f"), []byte("new"), 0o644) }},
				{"truncate", "f", "new", func() error { return os.Truncate(p("f"), 1) }},
				{"chmod", "f", "n", func() error { return os.Chmod(p("f"), 0o600) }},
				{"create", "g", "<absent>", func() error { return os.WriteFile(p("g"), []byte("g"), 0o644) }},
				{"symlink", "l", "<absent>", func() error { return os.Symlink("f", p("l")) }},
				{"setxattr", "g", "g", func() error { return unix.Setxattr(p("g"), "user.k", []byte("v"), 0) }},
				{"link", "h", "<absent>", func() error { return os.Link(p("g"), p("h")) }},
				{"mkdir", "d/e", "<absent>", func() error { return os.Mkdir(p("d/e"), 0o755) }},
				{"rename", "f", "n", func() error { return os.Rename(p("f"), p("d/f")) }},
				{"unlink", "g", "g", func() error { return os.Remove(p("g")) }},
				{"rmdir", "d/e", "<dir>", func() error { return os.Remove(p("d/e")) }},
			}
			for _, c := range ops {
				n := h.count()
				if err := c.op(); err != nil {
					if errors.Is(err, syscall.ENOTSUP) && c.name == "setxattr" {
						continue // the backing file system has no user xattrs
					}
					t.Fatalf("%s: %v", c.name, err)
				}
				call, ok := h.firstSince(n, c.rel)
				if !ok {
					t.Errorf("%s %s: no hook was asked", c.name, c.rel)
					continue
				}
				if call.seen != c.before {
					t.Errorf("%s %s: the hook saw %q on disk, want %q (the change reached the disk before the pre-image)", c.name, c.rel, call.seen, c.before)
				}
			}
			h.mu.Lock()
			pending := h.pending
			h.mu.Unlock()
			if pending != 0 {
				t.Errorf("%d changes begun were never done", pending)
			}

			// Refused: the operation fails and the disk keeps its bytes.
			os.WriteFile(p("r"), []byte("keep"), 0o644)
			h.mu.Lock()
			h.refuse["r"], h.refuse["d/r2"] = true, true
			h.mu.Unlock()
			for name, op := range map[string]func() error{
				"overwrite": func() error { return os.WriteFile(p("r"), []byte("lost"), 0o644) },
				"unlink":    func() error { return os.Remove(p("r")) },
				"rename":    func() error { return os.Rename(p("r"), p("d/r2")) },
				"chmod":     func() error { return os.Chmod(p("r"), 0o600) },
				"create":    func() error { return os.WriteFile(p("d/r2"), nil, 0o644) },
			} {
				if err := op(); err == nil {
					t.Errorf("refused %s went through", name)
				}
				if b, err := os.ReadFile(p("r")); err != nil || string(b) != "keep" {
					t.Errorf("after a refused %s: %q, %v", name, b, err)
				}
			}
			if fi, _ := os.Stat(p("r")); fi == nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("a refused chmod changed the mode: %v", fi)
			}
			if _, err := os.Lstat(p("d/r2")); err == nil {
				t.Error("a refused create or rename made d/r2")
			}
			kinds := map[string]bool{}
			h.mu.Lock()
			for _, c := range h.calls {
				kinds[c.kind] = true
			}
			h.mu.Unlock()
			if !kinds["change"] || !kinds["rename-from"] || !kinds["rename-to"] {
				t.Errorf("hook kinds called: %v", slices.Sorted(mapsKeys(kinds)))
			}
		})
	}
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
