package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Claude Code writes one JSON object per line to
// ~/.claude/projects/<munged cwd>/<session id>.jsonl. Conversation entries
// (user, assistant, system, attachment...) carry uuid, parentUuid (a chain,
// null at a root or a compact boundary, whose logicalParentUuid keeps the
// link), sessionId and isSidechain; assistant entries hold tool_use blocks
// and user entries the matching tool_result blocks. Metadata lines point at
// entries: summary by leafUuid, file-history-snapshot by messageId.

type claudeLine struct {
	Type       string  `json:"type"`
	UUID       string  `json:"uuid"`
	ParentUUID *string `json:"parentUuid"`
	SessionID  *string `json:"sessionId"`
	IsMeta     bool    `json:"isMeta"`
	IsCompact  bool    `json:"isCompactSummary"`
	LeafUUID   string  `json:"leafUuid"`
	MessageID  string  `json:"messageId"`
	Message    *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type claudeBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
	Text      string `json:"text"`
}

func parseClaude(line []byte, session *string) (entry, error) {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return entry{}, err
	}
	if l.Type == "" {
		return entry{}, errors.New("line without type")
	}
	e := entry{uuid: l.UUID, conv: l.Type == "user" || l.Type == "assistant"}
	if l.ParentUUID != nil {
		e.parent = *l.ParentUUID
	}
	if l.SessionID != nil && *l.SessionID != "" {
		e.session = true
		if *session == "" {
			*session = *l.SessionID
		}
	}
	if l.LeafUUID != "" {
		e.refs = append(e.refs, l.LeafUUID)
	}
	if l.MessageID != "" && l.Type != "user" && l.Type != "assistant" {
		e.refs = append(e.refs, l.MessageID)
	}
	if l.Message == nil || len(l.Message.Content) == 0 {
		return e, nil
	}
	var text string
	if json.Unmarshal(l.Message.Content, &text) == nil {
		if l.Type == "user" && !l.IsMeta && !l.IsCompact {
			e.prompt = text
		}
		return e, nil
	}
	var blocks []claudeBlock
	if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
		return entry{}, fmt.Errorf("message content is neither text nor blocks: %v", err)
	}
	var texts []string
	for _, b := range blocks {
		switch {
		case b.Type == "tool_use" || b.Type == "server_tool_use":
			if b.ID == "" {
				return entry{}, errors.New("tool_use block without id")
			}
			e.calls = append(e.calls, b.ID)
		case b.Type == "tool_result" || strings.HasSuffix(b.Type, "_tool_result"):
			// A server tool's result (web_search_tool_result, …) comes
			// in the same assistant message as its server_tool_use.
			if b.ToolUseID == "" {
				return entry{}, fmt.Errorf("%s block without tool_use_id", b.Type)
			}
			e.results = append(e.results, b.ToolUseID)
		case b.Type == "text":
			texts = append(texts, b.Text)
		}
	}
	// A prompt written as content blocks (text with a pasted image, say).
	if l.Type == "user" && !l.IsMeta && !l.IsCompact && len(e.results) == 0 && len(texts) > 0 {
		e.prompt = strings.Join(texts, "\n")
	}
	return e, nil
}

// claudeFork writes the kept lines with the new session id, drops metadata
// that points at an entry the fork does not keep, and adds the summary
// entry of the summarize modes.
func (t *Transcript) claudeFork(keep []int, child string, summary *summaryAt, now time.Time) ([][]byte, error) {
	kept := map[string]bool{}
	for _, i := range keep {
		if u := t.entries[i].uuid; u != "" {
			kept[u] = true
		}
	}
	var sumUUID string
	if summary != nil {
		sumUUID = uuid.NewString()
		kept[sumUUID] = true
	}
	var out [][]byte
	lastUUID := ""
	emitSummary := func(parent string) {
		p := any(nil)
		if parent != "" {
			p = parent
		}
		line, _ := json.Marshal(map[string]any{
			"parentUuid": p, "isSidechain": false, "userType": "external", "type": "user",
			"sessionId": child, "uuid": sumUUID, "timestamp": now.UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "user", "content": summary.text},
		})
		out = append(out, line)
		lastUUID = sumUUID
	}
	if summary != nil && summary.first {
		emitSummary("")
	}
	for _, i := range keep {
		e := t.entries[i]
		if dangling(e.refs, kept) {
			continue
		}
		line := t.Lines[i]
		if e.session {
			var ok bool
			if line, ok = setString(line, []string{"sessionId"}, child); !ok {
				return nil, fmt.Errorf("transcript %s: line %d: cannot set its session id", t.Path, i+1)
			}
		}
		if e.parent != "" && !kept[e.parent] {
			// Its parent was summarized away: hang it under the summary
			// when the summary comes first, else under the entry before
			// it, never under one written after it (a parent cycle).
			if sumUUID == "" {
				return nil, fmt.Errorf("transcript %s: line %d: its parent %s is not kept", t.Path, i+1, e.parent)
			}
			newParent := sumUUID
			if !summary.first {
				newParent = lastUUID
			}
			if newParent == "" {
				return nil, fmt.Errorf("transcript %s: line %d: its parent %s is not kept and nothing comes before it", t.Path, i+1, e.parent)
			}
			var ok bool
			if line, ok = setString(line, []string{"parentUuid"}, newParent); !ok {
				return nil, fmt.Errorf("transcript %s: line %d: cannot re-parent it", t.Path, i+1)
			}
		}
		out = append(out, line)
		if e.uuid != "" {
			lastUUID = e.uuid
		}
	}
	if summary != nil && !summary.first {
		emitSummary(lastUUID)
	}
	return out, nil
}

// claudePath is where Claude Code keeps session id's transcript: beside the
// original, in the same project directory.
func (t *Transcript) claudePath(child string, _ time.Time) string {
	return filepath.Join(filepath.Dir(t.Path), child+".jsonl")
}

func dangling(refs []string, kept map[string]bool) bool {
	for _, r := range refs {
		if !kept[r] {
			return true
		}
	}
	return false
}
