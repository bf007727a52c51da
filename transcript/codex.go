package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Codex CLI writes a rollout per session to
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl: lines of
// {timestamp, type, payload}. session_meta (first) carries the session id
// in payload.id; response_item payloads are messages, reasoning, and tool
// calls (function_call, custom_tool_call, local_shell_call with a call_id)
// and their outputs (function_call_output, custom_tool_call_output);
// event_msg and turn_context lines are the display log and turn state.

type codexLine struct {
	Type    string `json:"type"`
	Payload *struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		CallID  string          `json:"call_id"`
		Role    string          `json:"role"`
		Message string          `json:"message"`
		Content json.RawMessage `json:"content"`
	} `json:"payload"`
}

func parseCodex(line []byte, session *string) (entry, error) {
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return entry{}, err
	}
	if l.Payload == nil {
		// The rollout format before session_meta: a first line
		// {"id":…,"timestamp":…,"instructions":…} and then the response
		// items themselves, unwrapped.
		if err := json.Unmarshal(line, &l.Payload); err != nil {
			return entry{}, err
		}
		switch {
		case l.Type == "" && l.Payload.ID != "":
			l.Type = "session_meta"
		case l.Type != "":
			l.Type = "response_item"
		default:
			return entry{}, nil // {"record_type":"state"} and the like: bookkeeping
		}
	}
	if l.Type == "" {
		return entry{}, errors.New("line without type")
	}
	var e entry
	p := l.Payload
	switch l.Type {
	case "session_meta":
		if p.ID == "" {
			return entry{}, errors.New("session_meta without id")
		}
		e.session = true
		if *session == "" {
			*session = p.ID
		}
	case "response_item":
		e.conv = true
		switch p.Type {
		case "function_call", "custom_tool_call":
			if p.CallID == "" {
				return entry{}, fmt.Errorf("%s without call_id", p.Type)
			}
			e.calls = []string{p.CallID}
		case "local_shell_call":
			// Codex writes some with "call_id": null; no output can then
			// point back at it, so it pairs with nothing.
			if p.CallID != "" {
				e.calls = []string{p.CallID}
			}
		case "function_call_output", "custom_tool_call_output":
			if p.CallID == "" {
				return entry{}, fmt.Errorf("%s without call_id", p.Type)
			}
			e.results = []string{p.CallID}
		case "message":
			if p.Role == "user" {
				e.prompt = codexPrompt(p.Content)
			}
		}
	case "event_msg":
		if p.Type == "user_message" {
			e.prompt = p.Message
			e.calls, e.results = nil, nil
			e.uuid = "" // display mirror of the prompt
		}
	}
	return e, nil
}

// codexPrompt is the text a user message carries, or "" for the context
// Codex sends as a user message of its own (environment, instructions).
func codexPrompt(content json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range parts {
		if c.Type == "input_text" {
			b.WriteString(c.Text)
		}
	}
	if s := b.String(); !strings.HasPrefix(s, "<environment_context>") && !strings.HasPrefix(s, "<user_instructions>") {
		return s
	}
	return ""
}

// codexFork writes the kept lines with the session_meta's id set to the
// child's, and the summary item of the summarize modes (after the
// session_meta line, which must stay first).
func (t *Transcript) codexFork(keep []int, child string, summary *summaryAt, now time.Time) ([][]byte, error) {
	var out [][]byte
	emit := func() {
		ts := now.UTC().Format("2006-01-02T15:04:05.000Z")
		line, _ := json.Marshal(map[string]any{"timestamp": ts, "type": "response_item", "payload": map[string]any{
			"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": summary.text}},
		}})
		out = append(out, line)
	}
	metaSeen := false
	for _, i := range keep {
		line := t.Lines[i]
		if t.entries[i].session {
			var ok bool
			if line, ok = setString(line, []string{"payload", "id"}, child); !ok {
				// The format before session_meta: the id is top level.
				if line, ok = setString(t.Lines[i], []string{"id"}, child); !ok {
					return nil, fmt.Errorf("transcript %s: line %d: cannot set its session id", t.Path, i+1)
				}
			}
			// Newer Codex versions repeat it as payload.session_id: the
			// resumed fork must report its own id there too.
			if l2, ok := setString(line, []string{"payload", "session_id"}, child); ok {
				line = l2
			}
			out = append(out, line)
			if !metaSeen && summary != nil && summary.first {
				emit()
			}
			metaSeen = true
			continue
		}
		out = append(out, line)
	}
	if summary != nil && !summary.first {
		emit()
	}
	if !metaSeen {
		return nil, fmt.Errorf("transcript %s: the fork would have no session_meta line", t.Path)
	}
	return out, nil
}

// codexPath names the child's rollout beside the original.
func (t *Transcript) codexPath(child string, now time.Time) string {
	return filepath.Join(filepath.Dir(t.Path), "rollout-"+now.UTC().Format("2006-01-02T15-04-05")+"-"+child+".jsonl")
}
