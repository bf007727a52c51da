package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/ckfs-dev/ckfs/rewind"
	ctl "github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// inproc is a ckfs daemon served in this process (daemon.Start), mounted
// in place: the real daemon code, driven over its control socket.
type inproc struct {
	root, store string
	cas         *cas.Local // the store, for reads
	srv         *daemon.Server
}

func mountInProc(t testing.TB) *inproc {
	testenv.RequireFUSE(t)
	m := &inproc{root: t.TempDir(), store: t.TempDir()}
	t.Setenv("CKFS_HOME", t.TempDir())
	var err error
	m.srv, err = daemon.Start(context.Background(), daemon.Options{Store: m.store, Root: m.root, Mountpoint: m.root, MaxFileSize: capture.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
	if m.cas, err = cas.Open(m.store, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *inproc) unmount() {
	if err := m.srv.Stop(); err != nil {
		panic(fmt.Sprintf("stop the daemon: %v", err))
	}
}

// openWindow and closeWindow are a tool call's window, as the hooks send
// them; each returns the seq of its record.
func (m *inproc) openWindow(id string) (uint64, error) {
	rep, err := ctl.Call(m.store, ctl.Request{Op: "open", ID: id, Tool: "prop"})
	if err != nil {
		return 0, err
	}
	return rep.Seq, nil
}

func (m *inproc) closeWindow(id string) (uint64, error) {
	rep, err := ctl.Call(m.store, ctl.Request{Op: "close", ID: id})
	if err != nil {
		return 0, err
	}
	return rep.Seq, nil
}

// rewindTo rewinds the files in the daemon, as ckfs rewind does.
func (m *inproc) rewindTo(target uint64) (*rewind.Outcome, error) {
	rep, err := ctl.Call(m.store, ctl.Request{Op: "rewind", Rewind: &rewind.Request{Target: target, Apply: true}})
	if rep != nil {
		return rep.Outcome, err
	}
	return nil, err
}

var propNames = []string{"a", "b", "d", "d/a", "d/b", "d/e", "d/e/c", "e", "e/a"}

// playOps runs n random operations on the tree at root: writes, removals,
// renames, mkdirs, and (with maxOp 7) symlinks, chmods and removals of
// whole trees.
func playOps(rt *rapid.T, root string, n, maxOp int) {
	p := func(name string) string { return filepath.Join(root, name) }
	for range n {
		a := rapid.SampledFrom(propNames).Draw(rt, "path")
		switch rapid.IntRange(0, maxOp).Draw(rt, "op") {
		case 0, 1:
			os.WriteFile(p(a), []byte(rapid.SampledFrom([]string{"x", "y\n", "zz\nzz\n", "", "w", "v\n"}).Draw(rt, "content")), 0o644)
		case 2:
			os.Remove(p(a))
		case 3:
			os.Rename(p(a), p(rapid.SampledFrom(propNames).Draw(rt, "to")))
		case 4:
			os.Mkdir(p(a), 0o755)
		case 5:
			os.Symlink(rapid.SampledFrom([]string{"a", "../b", "nowhere"}).Draw(rt, "target"), p(a))
		case 6:
			os.Chmod(p(a), os.FileMode(rapid.SampledFrom([]uint32{0o600, 0o755, 0o644}).Draw(rt, "mode")))
		case 7:
			os.RemoveAll(p(a))
		}
	}
}

// tree reads the workspace through the mount.
func tree(t *rapid.T, root string) string {
	var lines []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		var st unix.Stat_t
		unix.Lstat(p, &st)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
		case info.IsDir():
			lines = append(lines, fmt.Sprintf("%s/ %o", rel, st.Mode&0o7777))
		default:
			b, _ := os.ReadFile(p)
			lines = append(lines, fmt.Sprintf("%s %o %q", rel, st.Mode&0o7777, b))
		}
		return nil
	})
	sort.Strings(lines)
	return fmt.Sprint(lines)
}

// TestRewindPropertyThroughMount plays random windows of random operations
// (create, edit, delete, rename, mkdir, rmdir, symlink, chmod) through a
// real mount, snapshots the tree after each window, then rewinds to every
// checkpoint in random order and requires each snapshot back byte for
// byte, read through the mount: files created later disappear, directories
// created later are removed, deleted ones come back.
func TestRewindPropertyThroughMount(t *testing.T) {
	testenv.RequireFUSE(t)
	rapid.Check(t, func(rt *rapid.T) {
		m := mountInProc(t)
		defer m.unmount()
		old := unix.Umask(0o022)
		defer unix.Umask(old)
		snaps := map[uint64]string{}
		var cps []uint64
		windows := rapid.IntRange(1, 4).Draw(rt, "windows")
		for w := range windows {
			id := fmt.Sprintf("w%d", w)
			open, err := m.openWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			if w == 0 {
				snaps[open], cps = tree(rt, m.root), append(cps, open)
			}
			playOps(rt, m.root, rapid.IntRange(1, 8).Draw(rt, "ops"), 7)
			closeSeq, err := m.closeWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			snaps[closeSeq], cps = tree(rt, m.root), append(cps, closeSeq)
		}
		order := rapid.Permutation(cps).Draw(rt, "order")
		for _, cp := range order {
			if _, err := m.rewindTo(cp); err != nil {
				rt.Fatalf("rewind to %d: %v", cp, err)
			}
			if got := tree(rt, m.root); got != snaps[cp] {
				rt.Fatalf("after rewind to %d the mount shows\n%s\nwant\n%s", cp, got, snaps[cp])
			}
		}
	})
}
