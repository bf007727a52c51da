package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
)

// gemini is Gemini CLI. Its hooks live in settings.json under its own
// event names, with timeouts in milliseconds; its tool events carry no
// call id, so ckfs pairs them (noCallIDs). It has no option that names a
// settings file: for one run ckfs passes the hooks as the system defaults
// file (the scope below every other; hooks of all scopes run), a copy of
// the one in place with ckfs's hooks added. Gemini reads a system file
// only where root owns it and every directory above it and none of them
// is writable by group or others, so this works for root; anyone else
// installs the hooks once (ckfs hooks install gemini), and ckfs agent
// gemini then adds nothing.
var gemini = &Agent{
	Name:      "gemini",
	Title:     "Gemini CLI",
	Binary:    "gemini",
	BinaryEnv: "CKFS_GEMINI",
	Package:   "@google/gemini-cli",
	Dialect:   transcript.Gemini,
	matchAll:  "*",
	events: map[string]string{
		"UserPromptSubmit": "BeforeAgent", // carries the prompt, before the transcript has it
		"PreToolUse":       "BeforeTool",
		"PostToolUse":      "AfterTool",
		"Stop":             "AfterAgent",
	},
	timeout:      60000, // milliseconds
	settingsPath: geminiSettings,
	launch: func(store string, hooks map[string]any) (*Launch, error) {
		if user, err := geminiSettings(); err == nil && hasHooks(user, hooks) {
			return &Launch{}, nil
		}
		path, err := rootOnlyFile(store, "gemini")
		if err != nil {
			return nil, err
		}
		l, err := systemDefaults(path, "GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "/etc/gemini-cli/settings.json", hooks)
		if err == nil && !strings.HasPrefix(path, store) {
			l.Temp = path
		}
		return l, err
	},
	noCallIDs:    true,
	installFirst: func() bool { return os.Geteuid() != 0 },
}

// geminiSettings is Gemini CLI's user settings file.
func geminiSettings() (string, error) {
	home := os.Getenv("GEMINI_CLI_HOME") // in place of the home directory
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(home, ".gemini", "settings.json"), nil
}

// systemDefaults passes hooks for one run as the system defaults file of an
// agent that reads it from the variable env, else from beside its system
// settings file (settingsEnv, else settingsDefault): a copy of the file in
// place, written to path, with ours added.
func systemDefaults(path, env, settingsEnv, settingsDefault string, hooks map[string]any) (*Launch, error) {
	base := os.Getenv(env)
	if base == "" {
		settings := settingsDefault
		if s := os.Getenv(settingsEnv); s != "" {
			settings = s
		}
		base = filepath.Join(filepath.Dir(settings), "system-defaults.json")
	}
	settings, err := readSettings(base)
	if err != nil {
		return nil, err
	}
	if _, err := MergeHooks(settings, hooks["hooks"].(map[string]any)); err != nil {
		return nil, fmt.Errorf("%s: %v", base, err)
	}
	if err := writeSettings(path, settings); err != nil {
		return nil, err
	}
	return &Launch{Env: []string{env + "=" + path}}, nil
}

// readSettings reads a JSON settings file; one that is not there is empty.
func readSettings(path string) (map[string]any, error) {
	settings := map[string]any{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return settings, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return settings, nil
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): fix it first", path, err)
	}
	return settings, nil
}

// hasHooks reports whether the settings file at path runs every hook of
// ours already (ckfs hooks install put them there).
func hasHooks(path string, hooks map[string]any) bool {
	settings, err := readSettings(path)
	if err != nil {
		return false
	}
	added, err := MergeHooks(settings, hooks["hooks"].(map[string]any))
	return err == nil && added == 0
}

// rootOnlyFile is where a settings file for one run goes that Gemini CLI
// will read as a system file: in the store when root owns it and every
// directory above it, none writable by group or others; else in
// /run/ckfs, made so, under a name of this run's. Anyone but root gets an error that says what to do.
func rootOnlyFile(store, name string) (string, error) {
	if os.Geteuid() != 0 {
		return "", errors.New("gemini takes hooks for one run only from a file that root owns: install ckfs's hooks once with ckfs hooks install gemini (they do nothing outside a ckfs mount), then run ckfs agent gemini again")
	}
	path := workspace.Layout(store).AgentSettings(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if rootOnly(filepath.Dir(path)) {
		return path, nil
	}
	dir := "/run/ckfs"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if !rootOnly(dir) {
		return "", fmt.Errorf("neither %s nor %s is a directory only root can write, which Gemini CLI needs to read hooks from a file for one run: install them with ckfs hooks install gemini", filepath.Dir(path), dir)
	}
	f, err := os.CreateTemp(dir, name+"-*.json") // this run's alone
	if err != nil {
		return "", err
	}
	f.Close()
	return f.Name(), nil
}

// rootOnly reports whether root owns dir and every directory above it and
// none of them is writable by group or others.
func rootOnly(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) != nil || st.Uid != 0 || st.Mode&0o022 != 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}
