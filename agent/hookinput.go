package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/workspace"
)

// HookInput is what Claude Code and Codex CLI send a command hook on
// stdin: the common fields of every event and those of the events ckfs
// handles. Fields ckfs does not need are ignored.
type HookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	Event          string          `json:"hook_event_name"`
	Source         string          `json:"source"`      // SessionStart: startup, resume, clear, compact
	Prompt         string          `json:"prompt"`      // UserPromptSubmit
	ToolName       string          `json:"tool_name"`   // PreToolUse, PostToolUse, PostToolUseFailure
	ToolInput      json.RawMessage `json:"tool_input"`  // the tool's input, as given
	ToolUseID      string          `json:"tool_use_id"` // the call id
	TurnID         string          `json:"turn_id"`     // Codex
	Timestamp      string          `json:"timestamp"`   // Gemini CLI, Qwen Code
	// AgentID names the subagent an event comes from (Claude Code: tool
	// events inside a subagent, SubagentStop); "" for the main thread.
	AgentID string `json:"agent_id"`
}

// MaxHookInput bounds what a hook reads: tool inputs carry whole files.
const MaxHookInput = 64 << 20

// ParseHookInput decodes and checks hook input. It never trusts a path or
// an id to be well formed: every field used to name a file or a window is
// checked here.
func ParseHookInput(b []byte) (*HookInput, error) {
	var in HookInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("hook input is not a JSON object: %v", err)
	}
	if in.Event == "" {
		return nil, errors.New("hook input without hook_event_name")
	}
	if in.Cwd == "" || !strings.HasPrefix(in.Cwd, "/") {
		return nil, fmt.Errorf("hook input: cwd %s is not an absolute path", brief(in.Cwd))
	}
	if in.SessionID != "" && !session.ValidID(in.SessionID) {
		return nil, fmt.Errorf("hook input: session_id %s is not a valid id", brief(in.SessionID))
	}
	if in.TranscriptPath != "" && !strings.HasPrefix(in.TranscriptPath, "/") {
		return nil, fmt.Errorf("hook input: transcript_path %s is not absolute", brief(in.TranscriptPath))
	}
	if in.AgentID != "" && !session.ValidID(in.AgentID) {
		return nil, fmt.Errorf("hook input: agent_id %s is not a valid id", brief(in.AgentID))
	}
	switch in.Event {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
		if in.ToolUseID == "" || len(in.ToolUseID) > 256 || strings.ContainsAny(in.ToolUseID, "\x00\n") {
			return nil, fmt.Errorf("hook input: %s with tool_use_id %s", brief(in.Event), brief(in.ToolUseID))
		}
	}
	return &in, nil
}

// brief quotes a field of hook input for an error message, cut to its
// first 100 bytes: whatever the input holds, hook.log gets one short line.
func brief(s string) string {
	if len(s) <= 100 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(strings.ToValidUTF8(s[:100], "")), len(s))
}

// ToolLabel is a one-line description of a tool call for ckfs log: the
// command of a shell tool, the file of an edit tool.
func ToolLabel(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd", "file_path", "filePath", "path", "notebook_path", "description", "pattern"} {
		if s, ok := inputString(m[k]); ok {
			return workspace.FirstLine(s, 200)
		}
	}
	return ""
}

// inputString is a tool input field as text: a string, or a list of
// strings (an argv) joined by spaces.
func inputString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []any:
		var parts []string
		for _, p := range v {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " "), true
	}
	return "", false
}

// toolCommand is the shell command a tool call runs ("command" for Claude
// Code's Bash, "cmd" for Codex's exec_command), "" for other tools.
func toolCommand(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd"} {
		if s, ok := inputString(m[k]); ok {
			return s
		}
	}
	return ""
}
