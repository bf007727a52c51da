package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/spf13/cobra"
	"github.com/zeebo/blake3"
)

// storeMeta is store.json: which root a store serves.
type storeMeta struct {
	Version int       `json:"version"`
	Root    string    `json:"root"`
	Created time.Time `json:"created"`
}

const storeMetaVersion = 1

// daemonState is daemon.json, written by a running daemon and removed when
// it stops cleanly.
type daemonState struct {
	PID        int       `json:"pid"`
	Root       string    `json:"root"`
	Mountpoint string    `json:"mountpoint"`
	Socket     string    `json:"socket"`
	Started    time.Time `json:"started"`
}

// storeBase is the directory under which default stores live.
func storeBase() (string, error) {
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

// pathKey names a directory in the store base: readable and unique.
func pathKey(abs string) string {
	sum := blake3.Sum256([]byte(abs))
	return fmt.Sprintf("%s-%x", filepath.Base(abs), sum[:8])
}

// absDir returns the cleaned absolute path of an existing directory.
func absDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// storeFlag returns --store as an absolute path, or "".
func storeFlag(cmd *cobra.Command) (string, error) {
	s, _ := cmd.Flags().GetString("store")
	if s == "" {
		return "", nil
	}
	return filepath.Abs(s)
}

// storeFor returns the store directory for the repository root.
func storeFor(cmd *cobra.Command, root string) (string, error) {
	if s, err := storeFlag(cmd); s != "" || err != nil {
		return s, err
	}
	base, err := storeBase()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, pathKey(root)), nil
}

// initStore creates the store for root if needed and checks that an
// existing one serves the same root.
func initStore(dir, root string) error {
	if within(dir, root) {
		return fmt.Errorf("store %s is inside the workspace %s: the agent would see it and could delete it; choose a --store outside", dir, root)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	meta, err := readMeta(dir)
	if errors.Is(err, fs.ErrNotExist) {
		b, _ := json.MarshalIndent(storeMeta{Version: storeMetaVersion, Root: root, Created: time.Now().UTC()}, "", "  ")
		return durable.WriteFile(filepath.Join(dir, "store.json"), append(b, '\n'), 0o600)
	}
	if err != nil {
		return err
	}
	if meta.Root != root {
		return withCode(ExitRefused, "store %s serves %s, not %s: use another --store", dir, meta.Root, root)
	}
	return nil
}

func readMeta(dir string) (*storeMeta, error) {
	b, err := os.ReadFile(filepath.Join(dir, "store.json"))
	if err != nil {
		return nil, err
	}
	var m storeMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "store.json"), err)
	}
	if m.Version != storeMetaVersion {
		return nil, fmt.Errorf("%s: unknown store version %d; upgrade ckfs", filepath.Join(dir, "store.json"), m.Version)
	}
	return &m, nil
}

func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// findStore locates the store of the workspace that contains start: the
// --store flag; else the store of the live mount nearest at or above start
// (each daemon registers its mountpoint, so a --store given at mount is
// found too); else the default store of start or of one of its parents.
func findStore(cmd *cobra.Command, start string) (string, *storeMeta, error) {
	s, err := storeFlag(cmd)
	if err != nil {
		return "", nil, err
	}
	return findStoreFrom(s, start)
}

// findStoreFrom is findStore with the --store value given (or "").
func findStoreFrom(s, start string) (string, *storeMeta, error) {
	if s != "" {
		m, err := readMeta(s)
		if err != nil {
			return "", nil, withCode(ExitNotMounted, "no ckfs store at %s: %v", s, err)
		}
		return s, m, nil
	}
	base, err := storeBase()
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
	if target, ok := servingStore(abs); ok {
		if m, err := readMeta(target); err == nil {
			return target, m, nil
		}
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		if target, err := filepath.EvalSymlinks(mountLink(base, dir)); err == nil {
			if m, err := readMeta(target); err == nil && daemonAlive(target) {
				return target, m, nil
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		for _, cand := range []string{filepath.Join(base, pathKey(dir)), mountLink(base, dir)} {
			if target, err := filepath.EvalSymlinks(cand); err == nil {
				if m, err := readMeta(target); err == nil {
					return target, m, nil
				}
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return "", nil, withCode(ExitNotMounted, "%s is not in a ckfs workspace: run ckfs mount on the repository first, or pass --store", abs)
}

// mountLink is where a daemon serving a separate mountpoint registers it.
func mountLink(base, mountpoint string) string {
	return filepath.Join(base, "mounts", pathKey(mountpoint))
}

func readDaemonState(store string) (*daemonState, error) {
	b, err := os.ReadFile(filepath.Join(store, "daemon.json"))
	if err != nil {
		return nil, err
	}
	var d daemonState
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(store, "daemon.json"), err)
	}
	return &d, nil
}
