package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"golang.org/x/sys/unix"
)

// InstallHooks merges ours into the agent settings at path, keeping every
// other setting and hook; alternates are other commands of ours that an
// installed hook is switched from. A copy of the old file is kept beside
// it, and the file is replaced atomically; dryRun prints the merged file
// to stdout instead. What it did is said on stderr.
func InstallHooks(path string, ours map[string]any, alternates []string, dryRun bool, now time.Time, stdout, stderr io.Writer) error {
	return editSettings(path, dryRun, now, stdout, stderr, settingsEdit{
		apply: func(settings map[string]any) (int, error) {
			return MergeHooks(settings, ours["hooks"].(map[string]any), alternates...)
		},
		would: "dry run: %d hook groups would be added to %s; nothing was written\n",
		none:  "%s has ckfs's hooks already; nothing was changed\n",
		done:  "added %d hook groups to %s\n",
		why:   "to install the hooks, or pass them for one run with ckfs agent",
	})
}

// UninstallHooks removes from the agent settings at path every hook that
// runs one of our commands, and the groups and events left empty by that;
// every other setting and hook, and whatever the user changed since the
// install, stays. It keeps a copy and writes as InstallHooks does.
func UninstallHooks(path string, commands []string, dryRun bool, now time.Time, stdout, stderr io.Writer) error {
	return editSettings(path, dryRun, now, stdout, stderr, settingsEdit{
		apply: func(settings map[string]any) (int, error) { return RemoveHooks(settings, commands) },
		would: "dry run: %d ckfs hooks would be removed from %s; nothing was written\n",
		none:  "%s has no ckfs hooks; nothing was changed\n",
		done:  "removed %d ckfs hooks from %s\n",
		why:   "to remove the hooks",
	})
}

// settingsEdit is one change to a settings file and what is said of it.
type settingsEdit struct {
	apply                  func(settings map[string]any) (int, error)
	would, none, done, why string
}

// editSettings applies e to the JSON settings file at path: through a
// symbolic link to where it points, never through a read-only file, with a
// copy of the old file kept beside it, replacing it atomically.
func editSettings(path string, dryRun bool, now time.Time, stdout, stderr io.Writer, e settingsEdit) error {
	// A settings file that is a symbolic link (dotfiles kept in a
	// repository) is written where it points, and stays a link.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("%s is a symbolic link that leads nowhere (%v): fix it first; nothing was changed", path, err)
		}
		path = target
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		// A file without its write bit was made read-only on purpose (root
		// could write it anyway): say so rather than write through it.
		if mode&0o200 == 0 || unix.Access(path, unix.W_OK) != nil {
			return fmt.Errorf("%s is read-only (mode %o): make it writable %s; nothing was changed", path, mode, e.why)
		}
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &settings); err != nil {
			return fmt.Errorf("%s is not valid JSON (%v): fix it first; nothing was changed", path, err)
		}
	}
	n, err := e.apply(settings)
	if err != nil {
		return fmt.Errorf("%s: %v; nothing was changed", path, err)
	}
	edited, _ := json.MarshalIndent(settings, "", "  ")
	edited = append(edited, '\n')
	if dryRun {
		stdout.Write(edited)
		fmt.Fprintf(stderr, e.would, n, path)
		return nil
	}
	if n == 0 {
		fmt.Fprintf(stderr, e.none, path)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if old != nil {
		backup := path + ".ckfs-backup-" + now.UTC().Format("20060102T150405Z")
		if err := durable.WriteFile(backup, old, 0o600); err != nil {
			return fmt.Errorf("keep a copy of %s: %w; nothing was changed", path, err)
		}
		fmt.Fprintf(stderr, "kept a copy of %s in %s\n", path, backup)
	}
	if err := durable.WriteFile(path, edited, mode); err != nil {
		return err
	}
	fmt.Fprintf(stderr, e.done, n, path)
	return nil
}

// Install puts ckfs's hooks (run by the ckfs binary exe) into the agent's
// own settings, or its plugin into its plugin directory; see InstallHooks.
func (a *Agent) Install(exe string, dryRun bool, now time.Time, stdout, stderr io.Writer) error {
	path, err := a.SettingsPath()
	if err != nil {
		return err
	}
	if a.plugin {
		return installPlugin(path, openCodePlugin(a.HookSettings(exe)), dryRun, stdout, stderr)
	}
	return InstallHooks(path, a.HookSettings(exe), a.HookCommands(exe)[1:], dryRun, now, stdout, stderr)
}

// Uninstall takes ckfs's hooks out of the agent's own settings, or removes
// its plugin; see UninstallHooks.
func (a *Agent) Uninstall(exe string, dryRun bool, now time.Time, stdout, stderr io.Writer) error {
	path, err := a.SettingsPath()
	if err != nil {
		return err
	}
	if a.plugin {
		return uninstallPlugin(path, dryRun, stderr)
	}
	return UninstallHooks(path, a.HookCommands(exe), dryRun, now, stdout, stderr)
}

// PrintHooks writes what ckfs would install for the agent: the hook
// settings as JSON, or the plugin's source.
func (a *Agent) PrintHooks(exe string, w io.Writer) error {
	if a.plugin {
		_, err := w.Write(openCodePlugin(a.HookSettings(exe)))
		return err
	}
	b, _ := json.MarshalIndent(a.HookSettings(exe), "", "  ")
	_, err := w.Write(append(b, '\n'))
	return err
}

// installPlugin writes the plugin src at path, unless a file that is not
// ckfs's is there.
func installPlugin(path string, src []byte, dryRun bool, stdout, stderr io.Writer) error {
	present, ours, err := pluginFile(path)
	if err != nil {
		return err
	}
	if present && !ours {
		return errNotOurs(path)
	}
	if old, _ := os.ReadFile(path); present && bytes.Equal(old, src) {
		fmt.Fprintf(stderr, "%s is ckfs's plugin already; nothing was changed\n", path)
		return nil
	}
	if dryRun {
		stdout.Write(src)
		fmt.Fprintf(stderr, "dry run: the plugin above would be written to %s; nothing was written\n", path)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := durable.WriteFile(path, src, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote ckfs's plugin to %s\n", path)
	return nil
}

// uninstallPlugin removes ckfs's plugin at path, and nothing else.
func uninstallPlugin(path string, dryRun bool, stderr io.Writer) error {
	present, ours, err := pluginFile(path)
	switch {
	case err != nil:
		return err
	case !present:
		fmt.Fprintf(stderr, "%s is not there; nothing was changed\n", path)
		return nil
	case !ours:
		return errNotOurs(path)
	case dryRun:
		fmt.Fprintf(stderr, "dry run: %s would be removed; nothing was changed\n", path)
		return nil
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "removed ckfs's plugin %s\n", path)
	return nil
}
