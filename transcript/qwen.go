package transcript

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Qwen Code writes one JSON object per line to
// ~/.qwen/projects/<munged cwd>/chats/<session id>.jsonl, in Claude Code's
// shape (uuid, parentUuid, sessionId on every line) with Gemini's message
// parts: user lines hold the prompt's text parts, assistant lines
// functionCall parts (the model's call id), tool_result lines the matching
// functionResponse parts, and system lines telemetry and snapshots. A fork
// is Claude Code's: every kept line with the child's session id.

type qwenLine struct {
	Type      string  `json:"type"`
	UUID      string  `json:"uuid"`
	Parent    *string `json:"parentUuid"`
	SessionID string  `json:"sessionId"`
	Message   *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"message"`
}

func parseQwen(line []byte, session *string) (entry, error) {
	var l qwenLine
	if err := json.Unmarshal(line, &l); err != nil {
		return entry{}, err
	}
	if l.Type == "" {
		return entry{}, errors.New("line without type")
	}
	e := entry{uuid: l.UUID, conv: l.Type == "user" || l.Type == "assistant" || l.Type == "tool_result"}
	if l.Parent != nil {
		e.parent = *l.Parent
	}
	if l.SessionID != "" {
		e.session = true
		if *session == "" {
			*session = l.SessionID
		}
	}
	if l.Message == nil {
		return e, nil
	}
	var texts []string
	for _, p := range l.Message.Parts {
		switch {
		case p.FunctionCall != nil:
			if p.FunctionCall.ID == "" {
				return entry{}, errors.New("functionCall without id")
			}
			e.calls = append(e.calls, p.FunctionCall.ID)
		case p.FunctionResponse != nil:
			if p.FunctionResponse.ID == "" {
				return entry{}, errors.New("functionResponse without id")
			}
			e.results = append(e.results, p.FunctionResponse.ID)
		case p.Text != nil:
			texts = append(texts, *p.Text)
		}
	}
	if l.Type == "user" && len(e.results) == 0 && len(texts) > 0 {
		e.prompt = strings.Join(texts, "")
	}
	return e, nil
}

// qwenFork is Claude Code's fork: a plain cut (Qwen has no summary entry
// ckfs could write).
func (t *Transcript) qwenFork(keep []int, child string, _ *summaryAt, now time.Time) ([][]byte, error) {
	return t.claudeFork(keep, child, nil, now)
}
