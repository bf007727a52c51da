package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckfs-dev/ckfs/workspace"
)

// opencode is OpenCode. It has no command hooks: a plugin (a JavaScript
// module it loads from its plugin directory, or from a configuration file
// that names it) sees each prompt (chat.message), each tool call before
// and after it runs (with OpenCode's call id), and the session going idle
// (the end of a turn), and passes each to ckfs's hook command as Claude
// Code's events. For one run ckfs names the plugin in a configuration file
// of its own (OPENCODE_CONFIG). Its sessions live in its own database, not
// in a transcript ckfs could fork safely: with OpenCode, ckfs rewinds
// files, and marks carry no conversation position.
var opencode = &Agent{
	Name:      "opencode",
	Title:     "OpenCode",
	Binary:    "opencode",
	BinaryEnv: "CKFS_OPENCODE",
	Package:   "opencode-ai",
	settingsPath: func() (string, error) {
		dir := os.Getenv("XDG_CONFIG_HOME")
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			dir = filepath.Join(home, ".config")
		}
		return filepath.Join(dir, "opencode", "plugin", "ckfs.js"), nil
	},
	launch: func(store string, hooks map[string]any) (*Launch, error) {
		l := workspace.Layout(store)
		plugin := filepath.Join(filepath.Dir(l.AgentSettings("opencode")), "opencode-plugin.js")
		if err := writeFile(plugin, openCodePlugin(hooks)); err != nil {
			return nil, err
		}
		// A configuration file the user passes already is kept, with the
		// plugin added to its list.
		config := map[string]any{}
		if user := os.Getenv("OPENCODE_CONFIG"); user != "" {
			var err error
			if config, err = readSettings(user); err != nil {
				return nil, err
			}
		}
		plugins, _ := config["plugin"].([]any)
		config["plugin"] = append(plugins, "file://"+plugin)
		path := l.AgentSettings("opencode")
		if err := writeSettings(path, config); err != nil {
			return nil, err
		}
		return &Launch{Env: []string{"OPENCODE_CONFIG=" + path}}, nil
	},
	plugin: true,
}

// pluginMarker opens the plugin ckfs writes, so that uninstall removes
// only a file of ckfs's.
const pluginMarker = "// ckfs: every tool call a window, every prompt a mark."

// openCodePlugin is the OpenCode plugin that sends its events to the hook
// command in hooks (HookSettings' command).
func openCodePlugin(hooks map[string]any) []byte {
	cmd := ""
	for _, g := range hooks["hooks"].(map[string]any) {
		cmd = ourCommand(g.([]map[string]any)[0])
		break
	}
	quoted, _ := json.Marshal(cmd)
	return []byte(strings.ReplaceAll(openCodePluginSource, "HOOK_COMMAND", string(quoted)))
}

const openCodePluginSource = pluginMarker + `
// Written by ckfs (ckfs hooks install opencode, or ckfs agent opencode);
// ckfs hooks uninstall opencode removes it. It passes OpenCode's events to
// ckfs's hook command, which records them and never fails or prints.
import { spawnSync } from "node:child_process"

const HOOK = HOOK_COMMAND

function send(event) {
  try {
    spawnSync("/bin/sh", ["-c", HOOK], { input: JSON.stringify(event), stdio: ["pipe", "ignore", "ignore"], timeout: 60000 })
  } catch {}
}

export const CkfsPlugin = async ({ directory }) => {
  const base = (name, session) => ({ hook_event_name: name, session_id: session, cwd: directory })
  return {
    "chat.message": async (input, output) => {
      const text = (output.parts || []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n")
      send({ ...base("UserPromptSubmit", input.sessionID), prompt: text })
    },
    "tool.execute.before": async (input, output) => {
      send({ ...base("PreToolUse", input.sessionID), tool_name: input.tool, tool_use_id: input.callID, tool_input: output.args })
    },
    "tool.execute.after": async (input) => {
      send({ ...base("PostToolUse", input.sessionID), tool_name: input.tool, tool_use_id: input.callID, tool_input: input.args })
    },
    event: async ({ event }) => {
      if (event.type === "session.idle") send(base("Stop", event.properties.sessionID))
    },
  }
}
`

// writeFile writes a file ckfs keeps in the store.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(path, b, 0o600)
}

// pluginFile is what is at the agent's plugin path: whether a file is
// there, and whether it is ckfs's.
func pluginFile(path string) (present, ours bool, err error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return true, bytes.HasPrefix(b, []byte(pluginMarker)), nil
}

// errNotOurs refuses to touch a plugin file ckfs did not write.
func errNotOurs(path string) error {
	return fmt.Errorf("%s is not ckfs's plugin (it does not begin with %q): move it away first; nothing was changed", path, pluginMarker)
}
