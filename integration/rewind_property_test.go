package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/daemon"
	"github.com/ckfs-dev/ckfs/index"
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

func mountInProc(t testing.TB) *inproc { return mountInProcAt(t, t.TempDir()) }

// mountInProcAt is mountInProc over a directory that may hold files.
func mountInProcAt(t testing.TB, root string) *inproc {
	testenv.RequireFUSE(t)
	m := &inproc{root: root, store: t.TempDir()}
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
	m := treeMap(root)
	lines := make([]string, 0, len(m))
	for _, l := range m {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return fmt.Sprint(lines)
}

// treeMap reads the workspace through the mount: each path's line of tree.
func treeMap(root string) map[string]string {
	lines := map[string]string{}
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
			lines[rel] = rel + " -> " + target
		case info.IsDir():
			lines[rel] = fmt.Sprintf("%s/ %o", rel, st.Mode&0o7777)
		default:
			b, _ := os.ReadFile(p)
			lines[rel] = fmt.Sprintf("%s %o %q", rel, st.Mode&0o7777, b)
		}
		return nil
	})
	return lines
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

// TestNoRewindDropsTheUsersChange plays random windows with the user's own
// changes between them, made through the mount outside any window or
// while nothing is mounted (the daemon stopped, the directory changed,
// a new daemon started on the same store). A rewind to before any window
// W must give back exactly the tree W found, the user's changes included,
// or refuse and change nothing: never drop a change W did not make.
// (A path ckfs never recorded, such as a directory the user made while
// nothing was mounted, is never touched by a rewind: it stays as it was.)
func TestNoRewindDropsTheUsersChange(t *testing.T) {
	testenv.RequireFUSE(t)
	rapid.Check(t, func(rt *rapid.T) {
		m := mountInProc(t)
		defer func() { m.unmount() }()
		old := unix.Umask(0o022)
		defer unix.Umask(old)
		found := map[uint64]map[string]string{} // tree at each window's open
		var opens []uint64
		windows := rapid.IntRange(1, 4).Draw(rt, "windows")
		for w := range windows {
			switch rapid.IntRange(0, 2).Draw(rt, "between") {
			case 1: // through the mount, outside any window
				playOps(rt, m.root, rapid.IntRange(1, 3).Draw(rt, "mine"), 6)
			case 2: // while nothing is mounted
				m.unmount()
				playOps(rt, m.root, rapid.IntRange(1, 3).Draw(rt, "mine"), 6)
				m.remount(t)
			}
			id := fmt.Sprintf("w%d", w)
			open, err := m.openWindow(id)
			if err != nil {
				rt.Fatal(err)
			}
			found[open], opens = treeMap(m.root), append(opens, open)
			playOps(rt, m.root, rapid.IntRange(1, 6).Draw(rt, "ops"), 6)
			if _, err := m.closeWindow(id); err != nil {
				rt.Fatal(err)
			}
		}
		target := rapid.SampledFrom(opens).Draw(rt, "target")
		before, beforeMap := tree(rt, m.root), treeMap(m.root)
		out, err := m.rewind(rewind.Request{Target: target, Apply: true})
		if err != nil {
			if got := tree(rt, m.root); got != before {
				rt.Fatalf("a refused rewind to %d changed the tree:\n%s\nwas\n%s", target, got, before)
			}
			// Refused over the user's changes since: --force takes them
			// (captured first) and must still give back what W found.
			if out, err = m.rewind(rewind.Request{Target: target, Apply: true, Force: true}); err != nil {
				// Some refusals --force does not override (a directory to
				// remove that holds files ckfs never recorded): nothing
				// may have changed.
				if got := tree(rt, m.root); !errors.Is(err, ctl.ErrRefused) || got != before {
					rt.Fatalf("rewind --force to %d: %v; the tree is\n%s\nwas\n%s", target, err, got, before)
				}
				return
			}
		}
		// A path whose state at the target ckfs cannot know (it changed
		// where ckfs could not see before ckfs first recorded it) is left
		// as it is, and the rewind says so.
		unknown := map[string]bool{}
		for _, u := range out.Plan.CannotRestore {
			unknown[u.Path] = true
		}
		recs, _, err := index.Load(filepath.Join(m.store, index.TimelineFile))
		if err != nil {
			rt.Fatal(err)
		}
		recorded := map[string]bool{}
		firstMode := map[string]uint32{} // paths first recorded after the target: their first mode
		for _, r := range recs {
			if !r.IsImage() {
				continue
			}
			if !recorded[r.Path] && r.Seq > target {
				firstMode[r.Path] = r.State.Mode
			}
			recorded[r.Path] = true
		}
		after := treeMap(m.root)
		for _, set := range []map[string]string{after, found[target], beforeMap} {
			for p := range set {
				want := found[target][p]
				if !recorded[p] || unknown[p] {
					want = beforeMap[p]
				}
				// Known gap: a directory made (or renamed into place)
				// while nothing was mounted, then changed by a window, is
				// taken to have existed at every earlier checkpoint:
				// directories have no time that tells when they were made
				// (a rename keeps the mtime), so a directory ckfs first
				// recorded after the target is kept, with the mode it has
				// then. A directory too many drops nothing of the user's;
				// what it holds is checked path by path.
				if _, later := firstMode[p]; want == "" && later && isDirLine(after[p]) {
					continue
				}
				// A path ckfs first recorded after the target takes the
				// mode of that first record: a chmod made where ckfs
				// could not see it (while nothing was mounted) leaves no
				// time a rewind could compare (only the content has
				// one), so the user's chmod is kept rather than guessed
				// away. Everything else about the path must match.
				if mode, ok := firstMode[p]; ok && after[p] == withMode(want, mode) {
					continue
				}
				if after[p] != want {
					if os.Getenv("CKFS_PROP_DEBUG") != "" {
						for _, r := range recs {
							b, _ := json.Marshal(r)
							rt.Log(string(b))
						}
						b, _ := json.Marshal(out.Plan)
						rt.Log("plan: ", string(b))
					}
					rt.Fatalf("after a rewind to before the window opened at %d, %s is %q; want %q (the window found %v)", target, p, after[p], want, found[target])
				}
			}
		}
	})
}

// isDirLine reports whether line, a line of treeMap, is a directory's.
func isDirLine(line string) bool {
	name, rest, _ := strings.Cut(line, " ")
	return strings.HasSuffix(name, "/") && !strings.HasPrefix(rest, "-> ")
}

// withMode is line, a line of treeMap, with its permission bits set to
// mode; a symlink's line, which has none, is returned as it is.
func withMode(line string, mode uint32) string {
	name, rest, ok := strings.Cut(line, " ")
	if !ok || strings.HasPrefix(rest, "-> ") {
		return line
	}
	_, content, _ := strings.Cut(rest, " ")
	out := fmt.Sprintf("%s %o", name, mode&0o7777)
	if content != "" {
		out += " " + content
	}
	return out
}

// remount starts a new daemon on the same store and directory.
func (m *inproc) remount(t testing.TB) {
	var err error
	m.srv, err = daemon.Start(context.Background(), daemon.Options{Store: m.store, Root: m.root, Mountpoint: m.root, MaxFileSize: capture.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
}

// rewind runs req in the daemon, as ckfs rewind does.
func (m *inproc) rewind(req rewind.Request) (*rewind.Outcome, error) {
	rep, err := ctl.Call(m.store, ctl.Request{Op: "rewind", Rewind: &req})
	if rep != nil {
		return rep.Outcome, err
	}
	return nil, err
}
