// Package agent connects coding agents to ckfs: it turns their hook events
// into windows, marks and session events (RunHook), writes the hook
// settings each agent reads or the plugin it loads (HookSettings,
// Install, Uninstall), and says how to start an agent with ckfs's hooks
// for one run (Launch).
//
// Everything that differs between agents is one Agent value, in a file of
// its own (claude.go, codex.go, gemini.go, qwen.go, opencode.go): its
// executable and install hint, where its settings live and in what form,
// its names for the hook events, how its hook matchers are written,
// whether its tool events carry a call id, how it is started with the
// hooks, and which transcript dialect it writes (package transcript reads
// those). A new agent is one such file, plus its dialect in transcript.
// Nothing outside this package and transcript tests which agent it has.
//
// The package sits above workspace (it talks to the daemon through the
// workspace's control client) and below the CLI; the small ckfs-hook
// executable links it and nothing of the mount.
package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// Agent describes one coding agent ckfs has hooks for.
type Agent struct {
	// Name is the agent's name on ckfs's command line (ckfs agent NAME,
	// ckfs hook NAME), and in session logs.
	Name string
	// Title is what people call it, for messages.
	Title string
	// Binary is the executable ckfs agent starts, unless the variable
	// BinaryEnv names another.
	Binary, BinaryEnv string
	// Package is the npm package that installs Binary.
	Package string
	// Dialect is the transcript dialect it writes (transcript.Claude, …);
	// "" when ckfs cannot fork its conversation (its marks then carry no
	// conversation position).
	Dialect string
	// matchAll is the hook matcher that matches every tool.
	matchAll string
	// events names its hook events where they differ from Claude Code's,
	// which are ckfs's names for them (PreToolUse → BeforeTool).
	events map[string]string
	// timeout is how long it lets a hook run, in its own unit.
	timeout int
	// toolEvents are the tool events it sends beyond PreToolUse and
	// PostToolUse.
	toolEvents []string
	// turnEvents are the other events without a matcher it sends ckfs
	// (Claude Code's SubagentStop).
	turnEvents []string
	// settingsPath is the user settings file it reads hooks from.
	settingsPath func() (string, error)
	// launch returns the arguments and environment that give it hooks
	// for one run.
	launch func(store string, hooks map[string]any) (*Launch, error)
	// noCallIDs: its tool events carry no call id. A PreToolUse is given
	// a new one, and a PostToolUse the id of the oldest open call of the
	// session with the same tool and input (pairCall).
	noCallIDs bool
	// installFirst: ckfs agent cannot pass it hooks for one run here;
	// they must be installed in its settings first.
	installFirst func() bool
	// plugin: its hooks are a plugin file ckfs writes (openCodePlugin),
	// installed at settingsPath, not entries merged into a settings file.
	plugin bool
	// continues: it sends a UserPromptSubmit with an empty prompt when it
	// goes on with a turn after tool results; that is no new turn.
	continues bool
	// postless: it runs some calls without a Post event (Codex applies a
	// patch it intercepts from a shell call itself); a result in its
	// transcript means such a call ran, so the next PreToolUse closes it.
	postless bool
}

// all are the agents ckfs has hooks for, in the order help lists them.
var all = []*Agent{claude, codex, gemini, qwen, opencode}

// Names are the agents' names, for help and completion.
func Names() []string {
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = a.Name
	}
	return names
}

// Lookup returns the agent named name, or an error that lists those ckfs
// has hooks for.
func Lookup(name string) (*Agent, error) {
	if i := slices.IndexFunc(all, func(a *Agent) bool { return a.Name == name }); i >= 0 {
		return all[i], nil
	}
	return nil, fmt.Errorf("%q: ckfs has hooks for %s; for other agents use ckfs run -- CMD", name, list(Names()))
}

// list joins names as "a, b and c".
func list(names []string) string {
	if len(names) < 2 {
		return fmt.Sprint(names)
	}
	s := names[0]
	for _, n := range names[1 : len(names)-1] {
		s += ", " + n
	}
	return s + " and " + names[len(names)-1]
}

// Executable is the agent's executable as found on PATH (BinaryEnv
// overrides Binary), or an error that says how to install it.
func (a *Agent) Executable() (string, error) {
	bin := os.Getenv(a.BinaryEnv)
	if bin == "" {
		bin = a.Binary
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("%s is not installed or not on PATH (npm install -g %s), or set %s", bin, a.Package, a.BinaryEnv)
	}
	return path, nil
}

// SettingsPath is the user settings file the agent reads its hooks from.
func (a *Agent) SettingsPath() (string, error) { return a.settingsPath() }

// Launch is how to start an agent with ckfs's hooks for one run.
type Launch struct {
	Args, Env []string // put before the user's arguments, added to the environment
	// Temp is a file made for this run alone, to remove when it ends.
	Temp string
}

// Launch returns how to start the agent with ckfs's hooks (run by the ckfs
// binary exe) for one run, kept in store where a file is needed: never in
// the repository or the user's own settings.
func (a *Agent) Launch(store, exe string) (*Launch, error) {
	return a.launch(store, a.HookSettings(exe))
}

// eventName is the agent's name for ckfs's hook event ev.
func (a *Agent) eventName(ev string) string {
	if n, ok := a.events[ev]; ok {
		return n
	}
	return ev
}

// canonicalEvent is ckfs's name for the agent's hook event name.
func (a *Agent) canonicalEvent(name string) string {
	for ev, n := range a.events {
		if n == name {
			return ev
		}
	}
	return name
}

// userPath is $env/name when the variable env is set, else ~/dir/name.
func userPath(env, dir, name string) (string, error) {
	if d := os.Getenv(env); d != "" {
		return filepath.Join(d, name), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, dir, name), nil
}
