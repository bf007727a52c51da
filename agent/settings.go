package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HookSettings is the hook configuration that sends every event ckfs uses
// to ckfs's hook command (run by the ckfs binary exe), in the shape the
// agent's settings take (Claude Code's, Gemini CLI's and Qwen Code's
// settings files and Codex CLI's hooks.json share it), under the agent's
// names for the events.
func (a *Agent) HookSettings(exe string) map[string]any {
	cmd := map[string]any{"type": "command", "command": a.HookCommands(exe)[0], "timeout": a.timeout}
	group := func(matcher bool) []map[string]any {
		g := map[string]any{"hooks": []any{cmd}}
		if matcher {
			g["matcher"] = a.matchAll
		}
		return []map[string]any{g}
	}
	hooks := map[string]any{
		a.eventName("SessionStart"):     group(false),
		a.eventName("UserPromptSubmit"): group(false),
		a.eventName("PreToolUse"):       group(true),
		a.eventName("PostToolUse"):      group(true),
		// The end of a turn closes every call that never reported back.
		a.eventName("Stop"): group(false),
	}
	for _, ev := range a.toolEvents {
		hooks[a.eventName(ev)] = group(true)
	}
	for _, ev := range a.turnEvents {
		// A subagent's end closes its calls that never reported back.
		hooks[a.eventName(ev)] = group(false)
	}
	return map[string]any{"hooks": hooks}
}

// HookExecutable is the small program that answers agent hooks: only the
// hook handler, so it starts in about half the time of the whole ckfs
// binary (which carries FUSE, the S3 client and the CLI). ckfs hook does
// the same work.
const HookExecutable = "ckfs-hook"

// HookCommands returns the command an agent runs for a hook event, first
// the one to install: the hook executable beside exe when it is there,
// else exe's hook command; then the other form, which is ckfs's too.
func (a *Agent) HookCommands(exe string) []string {
	full := ShellQuote(exe) + " hook " + a.Name
	small := filepath.Join(filepath.Dir(exe), HookExecutable)
	short := ShellQuote(small) + " " + a.Name
	if st, err := os.Stat(small); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return []string{short, full}
	}
	return []string{full, short}
}

// ShellQuote quotes s for a POSIX shell, leaving a plain word as it is.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TOMLInline writes v (maps, slices, strings, numbers, booleans) as a TOML
// inline value, for a -c override.
func TOMLInline(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + TOMLInline(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []map[string]any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = TOMLInline(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = TOMLInline(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		b, _ := json.Marshal(x) // a TOML basic string is a JSON string
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}

// MergeHooks adds each of our event's hook groups to settings["hooks"]
// unless a group with the same matcher and command is there; a group with
// the same matcher running one of the alternates (another form of ckfs's
// hook command) is changed to run ours instead. It returns how many groups
// it added or changed.
func MergeHooks(settings map[string]any, ours map[string]any, alternates ...string) (int, error) {
	hooks, ok := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && !ok {
		return 0, errors.New(`"hooks" is not an object`)
	}
	if hooks == nil {
		hooks = map[string]any{}
		settings["hooks"] = hooks
	}
	added := 0
	for event, groups := range ours {
		have, ok := hooks[event].([]any)
		if hooks[event] != nil && !ok {
			return 0, fmt.Errorf(`"hooks.%s" is not a list`, event)
		}
		for _, g := range groups.([]map[string]any) {
			if containsGroup(have, g) {
				continue
			}
			if replaceCommand(have, g, alternates) {
				added++
				continue
			}
			// Through JSON, so the stored group is plain data.
			b, _ := json.Marshal(g)
			var plain any
			json.Unmarshal(b, &plain)
			have = append(have, plain)
			added++
		}
		hooks[event] = have
	}
	return added, nil
}

// replaceCommand makes a group with g's matcher that runs one of the
// alternates run g's command; it reports whether there was one.
func replaceCommand(have []any, g map[string]any, alternates []string) bool {
	h := findHook(have, g, func(cmd string) bool { return slices.Contains(alternates, cmd) })
	if h != nil {
		h["command"] = ourCommand(g)
	}
	return h != nil
}

// containsGroup reports whether a group with g's matcher runs g's command.
func containsGroup(have []any, g map[string]any) bool {
	want := ourCommand(g)
	return findHook(have, g, func(cmd string) bool { return cmd == want }) != nil
}

func ourCommand(g map[string]any) string {
	return fmt.Sprint(g["hooks"].([]any)[0].(map[string]any)["command"])
}

// findHook returns the hook of a group in have with g's matcher whose
// command matches, or nil.
func findHook(have []any, g map[string]any, match func(cmd string) bool) map[string]any {
	for _, h := range have {
		m, _ := h.(map[string]any)
		if m == nil || fmt.Sprint(m["matcher"]) != fmt.Sprint(g["matcher"]) {
			continue
		}
		inner, _ := m["hooks"].([]any)
		for _, x := range inner {
			if xm, _ := x.(map[string]any); xm != nil && match(fmt.Sprint(xm["command"])) {
				return xm
			}
		}
	}
	return nil
}

// RemoveHooks removes from settings["hooks"] every hook whose command is
// one of commands, then the groups and the events it leaves empty, and
// "hooks" itself if nothing is left in it. It returns how many hooks it
// removed.
func RemoveHooks(settings map[string]any, commands []string) (int, error) {
	hooks, ok := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && !ok {
		return 0, errors.New(`"hooks" is not an object`)
	}
	removed := 0
	for event, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue // not ours to judge
		}
		var kept []any
		for _, g := range groups {
			m, _ := g.(map[string]any)
			inner, _ := m["hooks"].([]any)
			if m == nil || inner == nil {
				kept = append(kept, g)
				continue
			}
			left := slices.DeleteFunc(slices.Clone(inner), func(h any) bool {
				hm, _ := h.(map[string]any)
				return hm != nil && slices.Contains(commands, fmt.Sprint(hm["command"]))
			})
			removed += len(inner) - len(left)
			if len(left) > 0 {
				m["hooks"] = left
				kept = append(kept, m)
			}
		}
		if len(kept) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = kept
		}
	}
	if hooks != nil && len(hooks) == 0 {
		delete(settings, "hooks")
	}
	return removed, nil
}
