package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/zeebo/blake3"
)

// Meta is store.json: which root a store serves.
type Meta struct {
	Version int       `json:"version"`
	Root    string    `json:"root"`
	Created time.Time `json:"created"`
}

const MetaVersion = 1

// DaemonState is daemon.json, written by a running daemon and removed when
// it stops cleanly.
type DaemonState struct {
	PID        int       `json:"pid"`
	Root       string    `json:"root"`
	Mountpoint string    `json:"mountpoint"`
	Socket     string    `json:"socket"`
	Started    time.Time `json:"started"`
	// IO says how the mount serves files (the cached model, passthrough).
	IO string `json:"io,omitempty"`
	// Supervisor is the process that starts a successor when this daemon
	// dies (0: none; the mount then ends with it).
	Supervisor int `json:"supervisor,omitempty"`
}

// Base is the directory under which default stores live.
func Base() (string, error) {
	if h := os.Getenv("CKFS_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "ckfs"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find a place for the store: set CKFS_HOME or pass --store (%w)", err)
	}
	return filepath.Join(home, ".local", "state", "ckfs"), nil
}

// DefaultStore returns the store a repository whose root is the absolute
// path root gets when no --store is given: a directory named after it in
// the store base.
func DefaultStore(root string) (string, error) {
	base, err := Base()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, PathKey(root)), nil
}

// PathKey names a directory in the store base: readable and unique.
func PathKey(abs string) string {
	sum := blake3.Sum256([]byte(abs))
	return fmt.Sprintf("%s-%x", filepath.Base(abs), sum[:8])
}

// AbsDir returns the cleaned absolute path of an existing directory.
func AbsDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if errors.Is(err, syscall.ENOTCONN) && MountedAt(abs) {
		// A ckfs mount whose daemon is gone: still the directory (ckfs
		// mount detaches it and mounts again).
		return abs, nil
	}
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// Init creates the store for root if needed and checks that an
// existing one serves the same root.
func Init(dir, root string) error {
	if StoreWithin(dir, root) {
		return fmt.Errorf("store %s is inside the workspace %s (through symbolic links, or as named): the daemon would record its own writes through its own mount, and the agent could delete it; choose a --store (or CKFS_HOME) outside", dir, root)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	// The store holds the content of every file ever captured: only its
	// owner may read it, also when it was created by someone else first.
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("store %s is readable by others (mode %o) and could not be made private: %w", dir, fi.Mode().Perm(), err)
		}
	}
	meta, err := ReadMeta(dir)
	var damaged *damagedMetaError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeMeta(dir, root)
	case errors.As(err, &damaged) && isDefaultStore(dir, root):
		// Found at root's own path, it serves root: say so again.
		return writeMeta(dir, root)
	case errors.As(err, &damaged):
		damaged.root = root
		return err
	case err != nil:
		return err
	}
	if meta.Root != root {
		return Errorf(ErrRefused, "store %s serves %s, not %s: use another --store", dir, meta.Root, root)
	}
	return nil
}

func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(Layout(dir).Meta())
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &damagedMetaError{path: Layout(dir).Meta(), err: err}
	}
	if m.Version != MetaVersion {
		return nil, fmt.Errorf("%s: unknown store version %d; upgrade ckfs", Layout(dir).Meta(), m.Version)
	}
	return &m, nil
}

// writeMeta writes the store.json of a store serving root.
func writeMeta(dir, root string) error {
	b, _ := json.MarshalIndent(Meta{Version: MetaVersion, Root: root, Created: time.Now().UTC()}, "", "  ")
	return durable.WriteFile(Layout(dir).Meta(), append(b, '\n'), 0o600)
}

// isDefaultStore reports whether dir is the store root gets by default.
func isDefaultStore(dir, root string) bool {
	def, err := DefaultStore(root)
	return err == nil && filepath.Clean(def) == filepath.Clean(dir)
}

// damagedMetaError is a store.json that cannot be read back; root, when
// known, is the directory the store was asked to serve.
type damagedMetaError struct {
	path, root string
	err        error
}

func (e *damagedMetaError) Error() string {
	fix := "write into it the directory this store serves"
	if e.root != "" {
		fix = fmt.Sprintf(`if this store serves %s, write {"version": %d, "root": %q} into it`, e.root, MetaVersion, e.root)
	}
	return fmt.Sprintf("%s is damaged (%v): it says which directory the store serves; %s (ckfs mount writes it again by itself only for the store a directory gets by default, under CKFS_HOME)", e.path, e.err, fix)
}

func (e *damagedMetaError) Unwrap() error { return e.err }

// StoreWithin reports whether the store directory dir is root or beneath
// it, as named or through symbolic links.
func StoreWithin(dir, root string) bool {
	return Within(dir, root) || Within(resolve(dir), resolve(root))
}

// resolve returns p with the symbolic links of its longest existing
// prefix resolved (the rest may not exist yet), or p itself.
func resolve(p string) string { return resolveDepth(p, 0) }

func resolveDepth(p string, depth int) string {
	rest := ""
	for q := filepath.Clean(p); ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		if t, err := os.Readlink(q); err == nil && depth < 40 {
			// A link to what does not exist yet (MkdirAll would create
			// it): where it points.
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(q), t)
			}
			return filepath.Join(resolveDepth(t, depth+1), rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}

func Within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// find locates the store of the workspace that contains start: s (the
// --store flag) when it is not ""; else the store of the live mount
// nearest at or above start (each daemon registers its mountpoint, so a
// --store given at mount is found too); else the default store of start
// or of one of its parents.
func find(s, start string) (string, *Meta, error) {
	if s != "" {
		m, err := ReadMeta(s)
		if err != nil {
			return "", nil, Errorf(ErrNotMounted, "no ckfs store at %s: %v", s, err)
		}
		return s, m, nil
	}
	base, err := Base()
	if err != nil {
		return "", nil, err
	}
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", nil, err
	}
	// The mount that serves the path wins: the store its daemon named as
	// the mount's source (whatever CKFS_HOME this shell has); else the
	// nearest mountpoint at or above it whose daemon is alive, by the link
	// that daemon registered. Only then a store by path (an unmounted
	// workspace), nearest first.
	if target, ok := ServingStore(abs); ok {
		if m, err := ReadMeta(target); err == nil {
			return target, m, nil
		}
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		if target, err := filepath.EvalSymlinks(MountLink(base, dir)); err == nil {
			if m, err := ReadMeta(target); err == nil && DaemonAlive(target) {
				return target, m, nil
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		for _, cand := range []string{filepath.Join(base, PathKey(dir)), MountLink(base, dir)} {
			if target, err := filepath.EvalSymlinks(cand); err == nil {
				if m, err := ReadMeta(target); err == nil {
					return target, m, nil
				}
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return "", nil, Errorf(ErrNotMounted, "%s is not in a ckfs workspace: run ckfs mount on the repository first, or pass --store", abs)
}

// MountLink is where a daemon serving a separate mountpoint registers it.
func MountLink(base, mountpoint string) string {
	return filepath.Join(base, "mounts", PathKey(mountpoint))
}

func ReadDaemonState(store string) (*DaemonState, error) {
	b, err := os.ReadFile(Layout(store).DaemonState())
	if err != nil {
		return nil, err
	}
	var d DaemonState
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", Layout(store).DaemonState(), err)
	}
	return &d, nil
}

// CheckMountable refuses to serve root from store at mountpoint when the
// store serves another root, a live daemon serves it already, or a dead
// mount sits at mountpoint.
func CheckMountable(store, root, mountpoint string) error {
	if m, err := ReadMeta(store); err == nil && m.Root != root {
		return Errorf(ErrRefused, "store %s serves %s, not %s: use another --store", store, m.Root, root)
	}
	if st, err := ReadDaemonState(store); err == nil && ProcessAlive(st.PID) {
		return Errorf(ErrBusy, "%s is already mounted at %s by daemon pid %d: ckfs unmount %s first", root, st.Mountpoint, st.PID, st.Mountpoint)
	}
	if MountedAt(mountpoint) {
		// Another store's daemon (another CKFS_HOME or --store) may serve
		// it, alive: the mount names its store.
		if other, ok := ServingStore(mountpoint); ok && other != "" && other != store {
			if st, err := ReadDaemonState(other); err == nil && ProcessAlive(st.PID) {
				return Errorf(ErrBusy, "%s is already mounted by daemon pid %d with the store %s (another CKFS_HOME or --store): ckfs unmount %s first", mountpoint, st.PID, other, mountpoint)
			}
		}
		return &DeadMountError{Mountpoint: mountpoint}
	}
	return nil
}

// DeadMountError is a ckfs mount whose daemon is gone, in the way of a
// new one: CleanDeadMount detaches it. It is of kind ErrBusy.
type DeadMountError struct{ Mountpoint string }

func (e *DeadMountError) Error() string {
	return fmt.Sprintf("%s has a ckfs mount whose daemon is gone: ckfs mount %s detaches it and mounts again (or ckfs unmount %s)", e.Mountpoint, e.Mountpoint, e.Mountpoint)
}

func (e *DeadMountError) Is(target error) bool { return target == ErrBusy }

// FileCheckpoint is the file timeline's last seq: through the daemon (after
// it records what is being written) when mounted, from the file otherwise.
func FileCheckpoint(store string, mounted bool) (uint64, error) {
	if mounted {
		return DaemonOf(store).Flush()
	}
	return lastTimelineSeq(store)
}

// DaemonAlive reports whether the store's daemon is running.
func DaemonAlive(store string) bool {
	st, err := ReadDaemonState(store)
	return err == nil && ProcessAlive(st.PID)
}

// lastTimelineSeq reads the file timeline's last seq from its tail.
func lastTimelineSeq(store string) (uint64, error) {
	return index.LastSeq(Layout(store).Timeline())
}
