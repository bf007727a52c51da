// Package session is ckfs's conversation side: its own session logs
// (sessions/<id>.jsonl: what was asked, which tools ran, with their own
// seq), the marks that pair a moment of the conversation with a moment of
// the file timeline (marks.jsonl), and conversation forks. It never reads
// or writes the file timeline, and no record of it refers to one.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ckfs-dev/ckfs/internal/safename"
)

// Version is the format version of session logs and marks.
const Version = 1

// Kind is the kind of a session event.
type Kind string

// The event kinds; docs/format.md describes each.
const (
	KindStart      Kind = "start"       // the agent's session began or resumed
	KindPrompt     Kind = "prompt"      // the user submitted a prompt: a turn begins
	KindToolCall   Kind = "tool_call"   // the agent called a tool
	KindToolResult Kind = "tool_result" // that tool call finished
	KindSummary    Kind = "summary"     // one message standing for a summarized range
	KindFork       Kind = "fork"        // this log is a fork of another (its first record)
)

// Event is one line of a session log.
type Event struct {
	V    int       `json:"v"`
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`

	Agent        string `json:"agent,omitempty"`         // start: claude, codex, or another agent's name
	AgentSession string `json:"agent_session,omitempty"` // start: the agent's own session id
	Transcript   string `json:"transcript,omitempty"`    // start, prompt: the agent's transcript file
	Source       string `json:"source,omitempty"`        // start: startup, resume, clear, compact

	Text string `json:"text,omitempty"` // prompt: what was asked; summary: the summary

	Call   string          `json:"call,omitempty"`   // tool_call, tool_result: the agent's call id
	Tool   string          `json:"tool,omitempty"`   // tool_call: the tool's name
	Input  json.RawMessage `json:"input,omitempty"`  // tool_call: its input, as the agent gave it
	Failed bool            `json:"failed,omitempty"` // tool_result: the call failed
	// Subagent names the subagent that made a tool_call or tool_result
	// (Claude Code's agent_id): its calls are in its own transcript, not
	// the conversation's, and run beside the main thread's turns.
	Subagent string `json:"subagent,omitempty"`
	// Unfinished marks a tool_result ckfs wrote itself: the agent never
	// reported the call done (the user rejected it, another hook blocked
	// it, it was aborted or left running), and the end of the turn, the
	// next prompt or the next session start closed it.
	Unfinished bool `json:"unfinished,omitempty"`

	Parent string  `json:"parent,omitempty"` // fork: the log this one was forked from
	Cut    *uint64 `json:"cut,omitempty"`    // fork: the parent's clean boundary
	Mode   string  `json:"mode,omitempty"`   // fork: cut, summarize-from, summarize-up-to
}

// The fork modes.
const (
	ModeCut           = "cut"
	ModeSummarizeFrom = "summarize-from"
	ModeSummarizeUpTo = "summarize-up-to"
)

// ValidID reports whether s can name a session (and a file): 1 to 128
// letters, digits, '.', '_' or '-', starting with a letter or digit. (A
// loop, not a regular expression: compiling one cost every hook process
// most of a millisecond at start.)
func ValidID(s string) bool { return safename.Valid(s, 128) }

// Validate checks an event read from a log.
func (e *Event) Validate() error {
	if e.V != Version {
		return fmt.Errorf("session log version %d (this ckfs reads version %d)", e.V, Version)
	}
	if e.Seq == 0 || e.Time.IsZero() {
		return errors.New("event without seq or time")
	}
	switch e.Kind {
	case KindStart, KindPrompt, KindSummary:
	case KindToolCall, KindToolResult:
		if e.Call == "" {
			return fmt.Errorf("%s event without call id", e.Kind)
		}
	case KindFork:
		if !ValidID(e.Parent) || e.Cut == nil {
			return errors.New("fork event needs a parent session id and a cut")
		}
		switch e.Mode {
		case ModeCut, ModeSummarizeFrom, ModeSummarizeUpTo:
		default:
			return fmt.Errorf("fork mode %q", e.Mode)
		}
	default:
		return fmt.Errorf("unknown event kind %q", e.Kind)
	}
	return nil
}

// ParseEvent decodes and validates one line of a session log.
func ParseEvent(line []byte) (*Event, error) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &e, nil
}
