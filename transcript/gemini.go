package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Gemini CLI writes an event log per session to
// ~/.gemini/tmp/<project>/chats/session-<time>-<id prefix>.jsonl. Its state
// is the fold of the lines: a header ({sessionId, projectHash, …}, written
// again by each process that resumes the session), message records (an
// "id"; a record with an id seen before replaces it: a model message is
// written when it streams and again with its toolCalls, each holding its
// result, once they ran), "$set" patches of the header's fields ("$set"
// messages replaces the whole history, as a resume does), and "$rewindTo"
// records (Gemini's own rewind). Tool results also come back as user
// messages of functionResponse parts.

type geminiLine struct {
	ID        *string         `json:"id"`
	Type      string          `json:"type"`
	SessionID string          `json:"sessionId"`
	Project   string          `json:"projectHash"`
	Set       json.RawMessage `json:"$set"`
	RewindTo  *string         `json:"$rewindTo"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID     string          `json:"id"`
		Result json.RawMessage `json:"result"`
	} `json:"toolCalls"`
}

type geminiPart struct {
	Text             *string `json:"text"`
	FunctionResponse *struct {
		ID string `json:"id"`
	} `json:"functionResponse"`
	FunctionCall *struct {
		ID string `json:"id"`
	} `json:"functionCall"`
}

func parseGemini(line []byte, session *string) (entry, error) {
	var l geminiLine
	if err := json.Unmarshal(line, &l); err != nil {
		return entry{}, err
	}
	var e entry
	switch {
	case l.Set != nil:
		var set struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(l.Set, &set); err != nil {
			return entry{}, fmt.Errorf("$set is not an object: %v", err)
		}
		e.session = set.SessionID != ""
	case l.RewindTo != nil:
	case l.ID != nil:
		if *l.ID == "" {
			return entry{}, errors.New("message record with an empty id")
		}
		e.conv = l.Type == "user" || l.Type == "gemini"
		if err := geminiMessage(&l, &e); err != nil {
			return entry{}, err
		}
	case l.SessionID != "" && l.Project != "":
		e.session = true
		if *session == "" {
			*session = l.SessionID
		}
	default:
		return entry{}, errors.New("line is neither a header, a message, $set nor $rewindTo")
	}
	return e, nil
}

// geminiMessage reads a message record's calls, results and prompt.
func geminiMessage(l *geminiLine, e *entry) error {
	for _, c := range l.ToolCalls {
		if c.ID == "" {
			return errors.New("tool call without id")
		}
		e.calls = append(e.calls, c.ID)
		if len(c.Result) > 0 && string(c.Result) != "null" {
			e.results = append(e.results, c.ID)
		}
	}
	var parts []geminiPart
	if len(l.Content) == 0 || json.Unmarshal(l.Content, &parts) != nil {
		return nil // text content (a model message), or none
	}
	var texts []string
	for _, p := range parts {
		switch {
		case p.FunctionResponse != nil:
			e.results = append(e.results, p.FunctionResponse.ID)
		case p.FunctionCall != nil:
			e.calls = append(e.calls, p.FunctionCall.ID)
		case p.Text != nil:
			texts = append(texts, *p.Text)
		}
	}
	if l.Type == "user" && len(e.results) == 0 && len(texts) > 0 {
		e.prompt = strings.Join(texts, "")
	}
	return nil
}

// geminiFork writes the kept lines with the child's session id in every
// header and every $set of the session id. Gemini finds a session by the
// id in its header, in a file whose name ends with the id's first eight
// characters.
func (t *Transcript) geminiFork(keep []int, child string, _ *summaryAt, _ time.Time) ([][]byte, error) {
	var out [][]byte
	for _, i := range keep {
		line := t.Lines[i]
		if t.entries[i].session {
			l, ok := setString(line, []string{"sessionId"}, child)
			if !ok {
				l, ok = setString(line, []string{"$set", "sessionId"}, child)
			}
			if !ok {
				return nil, fmt.Errorf("transcript %s: line %d: cannot set its session id", t.Path, i+1)
			}
			line = l
		}
		out = append(out, line)
	}
	return out, nil
}

// geminiPath names the child's log beside the original, as Gemini names
// its own: session-<UTC minute>-<first 8 of the id>.jsonl.
func (t *Transcript) geminiPath(child string, now time.Time) string {
	short := child
	if len(short) > 8 {
		short = short[:8]
	}
	return filepath.Join(filepath.Dir(t.Path), "session-"+now.UTC().Format("2006-01-02T15-04")+"-"+short+".jsonl")
}

// geminiLogOf is the log Gemini CLI writes session's turns to. A process
// that resumes a session in a later minute names a new file after that
// minute in its SessionStart event (and writes a header there), but
// appends the turns to the file it resumed: the earliest one in the directory
// whose header names the session, as Gemini's own --resume picks. A path
// with no such sibling is returned as it is.
func geminiLogOf(path, session string) string {
	if len(session) < 8 {
		return path
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "session-*-"+session[:8]+".jsonl"))
	slices.Sort(matches) // the names begin with the minute they were made
	for _, m := range matches {
		f, err := os.Open(m)
		if err != nil {
			continue
		}
		line, _ := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
		f.Close()
		var h geminiLine
		if json.Unmarshal(line, &h) == nil && h.SessionID == session && h.Project != "" {
			return m
		}
	}
	return path
}
