package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/proc"
	"github.com/ckfs-dev/ckfs/session"
	"github.com/ckfs-dev/ckfs/transcript"
	"github.com/ckfs-dev/ckfs/workspace"
)

// RunHook handles one hook event. It never fails: an agent must never be
// blocked by its undo layer. Problems are logged to the store's hook.log
// (before a store is found, to hook.log in the directory of all stores);
// nothing is ever written to stderr, which the agent may show.
func RunHook(name string, stdin io.Reader, stderr io.Writer, now time.Time) {
	// Nothing goes to stderr, which the agent may show: problems go to the
	// store's hook.log, or, before a store is found, to hook.log in the
	// directory of all stores.
	logw := io.Writer(io.Discard)
	if base, err := workspace.Base(); err == nil && os.MkdirAll(base, 0o700) == nil {
		if f, err := openHookLog(filepath.Join(base, "hook.log")); err == nil {
			defer f.Close()
			logw = f
		}
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(logw, "ckfs hook: internal error: %v\n", r)
		}
	}()
	a, err := Lookup(name)
	if err != nil {
		fmt.Fprintf(logw, "ckfs hook: %v\n", err)
		return
	}
	b, err := io.ReadAll(io.LimitReader(stdin, MaxHookInput))
	if err != nil {
		fmt.Fprintf(logw, "ckfs hook: read stdin: %v\n", err)
		return
	}
	in, err := ParseHookInput(b)
	if err != nil {
		fmt.Fprintf(logw, "ckfs hook: %v\n", err)
		return
	}
	in.Event = a.canonicalEvent(in.Event)
	ws, err := workspace.Locate(os.Getenv("CKFS_STORE"), in.Cwd)
	if err != nil {
		// Not a ckfs workspace (hooks installed for every repository, this
		// one never mounted): the agent runs without undo, silently, and
		// nothing is logged, or every tool call would add a line.
		return
	}
	store := ws.Store
	f, err := openHookLog(ws.Layout().HookLog())
	if err == nil {
		defer f.Close()
		logw = f
	}
	log := slog.New(slog.NewJSONHandler(logw, nil)).With("agent", a.Name, "event", in.Event, "session", in.SessionID)
	// The agent waits for the hook: whatever it is given (a transcript on
	// a hung file system, a daemon that stopped answering), it returns
	// within HookDeadline, and the process exits with the rest undone.
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("internal error: %v", r)
			}
		}()
		done <- handleHook(store, a, in, now)
	}()
	select {
	case err := <-done:
		if err != nil {
			log.Warn("hook", "err", err.Error())
		}
	case <-time.After(HookDeadline):
		log.Warn("hook", "err", fmt.Sprintf("gave up after %s; the event was not recorded", HookDeadline))
	}
}

// maxHookLog is the size past which hook.log is moved to hook.log.1 (the
// one before is dropped), so a hook that fails on every call never fills
// the disk.
const maxHookLog = 1 << 20

// openHookLog opens a hook.log for appending, moving it aside first when
// it has grown past maxHookLog.
func openHookLog(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > maxHookLog {
		os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}

// HookDeadline is the longest a hook makes its agent wait.
const HookDeadline = 10 * time.Second

// handleHook records one event on both timelines, each on its own.
func handleHook(store string, a *Agent, in *HookInput, now time.Time) error {
	if in.Event == "UserPromptSubmit" && (InjectedPrompt(in.Prompt) || a.continues && strings.TrimSpace(in.Prompt) == "") {
		// Not the user's: a background task's notification or another
		// text the agent injects, possibly between a tool call and its
		// result, or the agent going on with its turn. It is no turn
		// boundary, and a mark there would be a cut that a conversation
		// rewind must refuse.
		return nil
	}
	if a.Dialect != "" {
		in.TranscriptPath = transcript.LogOf(in.TranscriptPath, a.Dialect, in.SessionID)
	}
	if a.noCallIDs {
		if err := pairCall(store, a, in, now); err != nil {
			return err
		}
	}
	mounted := workspace.DaemonAlive(store)
	if err := closeBefore(store, a, in, mounted, now); err != nil || in.Event == "SubagentStop" {
		return err
	}
	switch in.Event {
	case "SessionStart":
		if in.SessionID == "" {
			return fmt.Errorf("SessionStart without session_id")
		}
		return session.Append(store, in.SessionID, now, &session.Event{Kind: session.KindStart, Agent: a.Name,
			AgentSession: in.SessionID, Transcript: in.TranscriptPath, Source: in.Source})
	case "UserPromptSubmit":
		if err := writeHookMark(store, a, in, mounted, now); err != nil {
			return err
		}
		if in.SessionID == "" {
			return nil
		}
		return session.Append(store, in.SessionID, now, &session.Event{Kind: session.KindPrompt, Text: in.Prompt, Transcript: in.TranscriptPath})
	case "PreToolUse":
		var werr error
		if mounted {
			_, werr = workspace.DaemonOf(store).OpenWindow(workspace.Window{ID: in.ToolUseID, Tool: in.ToolName, Label: ToolLabel(in.ToolInput),
				Agent: proc.Agent(proc.System{}, os.Getppid()), Command: toolCommand(in.ToolInput)})
		}
		if in.SessionID != "" {
			if err := session.Append(store, in.SessionID, now, &session.Event{Kind: session.KindToolCall, Call: in.ToolUseID, Tool: in.ToolName, Input: compactJSON(in.ToolInput), Subagent: in.AgentID}); err != nil {
				return err
			}
		}
		return werr
	case "PostToolUse", "PostToolUseFailure":
		var werr error
		if mounted {
			_, werr = workspace.DaemonOf(store).CloseWindow(in.ToolUseID, closeReason(in.Event))
		}
		if in.SessionID != "" {
			if err := session.Append(store, in.SessionID, now, &session.Event{Kind: session.KindToolResult, Call: in.ToolUseID, Failed: in.Event == "PostToolUseFailure", Subagent: in.AgentID}); err != nil {
				return err
			}
		}
		return werr
	}
	return nil // events ckfs does not use
}

// closeBefore closes what an event ends before it is recorded: at a turn
// boundary the main thread's calls that never reported back, at a
// subagent's end its own, and for an agent that runs some calls without
// a Post event those its transcript answered.
func closeBefore(store string, a *Agent, in *HookInput, mounted bool, now time.Time) error {
	switch in.Event {
	case "SessionStart", "UserPromptSubmit", "Stop":
		// A turn boundary: every call of the session's main thread still
		// open will never get its Post event (rejected, blocked, aborted,
		// left running). Close them first, so no window stays open and
		// the next mark is taken after them. A subagent's calls may go on
		// (Claude Code runs subagents beside the main thread): they close
		// with their own Post event or at the subagent's end; a new
		// process's session start closes them too.
		if err := closeOpenCalls(store, a, in, mounted, now, true); err != nil {
			return err
		}
		if in.Event == "SessionStart" && in.Source != "compact" && in.Source != "clear" {
			// A new process (startup, resume): the old one's subagents
			// are gone. A compaction or /clear keeps the process, and a
			// subagent running in it goes on.
			if err := closeSubagentCalls(store, in, mounted, now, ""); err != nil {
				return err
			}
		}
	case "SubagentStop":
		return closeSubagentCalls(store, in, mounted, now, in.AgentID)
	case "PreToolUse":
		// An agent that runs some calls without a Post event has their
		// result in its transcript by the next call. Close such calls
		// before the next one opens, so their windows do not run
		// alongside it.
		if a.postless {
			if err := closeOpenCalls(store, a, in, mounted, now, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeOpenCalls closes the calls of the session that have no result in
// its log: those the agent's transcript holds a result for as finished,
// and, at a turn's end (turnEnd), every other one as unfinished (its
// window, and in the session log a tool_result marked unfinished), so both
// timelines treat it as the agent does (a call that is over).
func closeOpenCalls(store string, a *Agent, in *HookInput, mounted bool, now time.Time, turnEnd bool) error {
	if in.SessionID == "" {
		return nil
	}
	calls, err := session.OpenCalls(store, in.SessionID)
	if err != nil || len(calls) == 0 {
		return err
	}
	// An agent that runs some calls without a Post event (Codex, a patch
	// it applies itself) has their result in its transcript: there a
	// result means the call ran. An agent that sends a Post event for
	// every call that ran (Claude Code) answers a call that never ran
	// (rejected, blocked) with a result and no Post event.
	var answered map[string]bool
	if in.TranscriptPath != "" && a.postless {
		// Unreadable: every call counts as unanswered.
		answered, _ = transcript.Answered(in.TranscriptPath, a.Dialect, calls)
	}
	var errs []error
	for _, c := range calls {
		finished := answered[c]
		if !finished && !turnEnd {
			continue
		}
		reason := ""
		if !finished {
			reason = index.ReasonUnfinished
		}
		if mounted {
			// Refused: the window is closed already.
			if _, err := workspace.DaemonOf(store).CloseWindow(c, reason); err != nil && !errors.Is(err, workspace.ErrRefused) {
				errs = append(errs, err)
			}
		}
		if err := session.Append(store, in.SessionID, now, &session.Event{Kind: session.KindToolResult, Call: c, Failed: !finished, Unfinished: !finished}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeSubagentCalls closes, as unfinished, the open calls of subagent
// agent (of every subagent, if agent is "") of the session: the subagent
// ended, or the session started again, without their Post events.
func closeSubagentCalls(store string, in *HookInput, mounted bool, now time.Time, agent string) error {
	if in.SessionID == "" || (agent == "" && in.Event == "SubagentStop") {
		return nil
	}
	calls, err := session.OpenSubagentCalls(store, in.SessionID, agent)
	if err != nil || len(calls) == 0 {
		return err
	}
	var errs []error
	for _, c := range calls {
		if mounted {
			if _, err := workspace.DaemonOf(store).CloseWindow(c.Call, index.ReasonUnfinished); err != nil && !errors.Is(err, workspace.ErrRefused) {
				errs = append(errs, err)
			}
		}
		if err := session.Append(store, in.SessionID, now, &session.Event{Kind: session.KindToolResult, Call: c.Call, Failed: true, Unfinished: true, Subagent: c.Subagent}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// injectedTags open the prompts an agent submits on its own (Claude Code
// delivers a background task's completion as a UserPromptSubmit whose text
// is a <task-notification>), which are not turns of the user's.
var injectedTags = []string{"<task-notification>", "<system-reminder>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "<bash-notification>"}

// injectedHeader opens the background-task notifications of Claude Code
// 2.1, before their <task-notification>.
const injectedHeader = "[SYSTEM NOTIFICATION - NOT USER INPUT]"

// InjectedPrompt reports whether a submitted prompt is one the agent
// injected rather than one the user wrote.
func InjectedPrompt(p string) bool {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, injectedHeader) {
		return true
	}
	for _, tag := range injectedTags {
		if strings.HasPrefix(p, tag) {
			return true
		}
	}
	return false
}

// writeHookMark writes the mark of a turn that is about to begin: the file
// checkpoint now and the conversation as it stands before the prompt.
func writeHookMark(store string, a *Agent, in *HookInput, mounted bool, now time.Time) error {
	files, err := workspace.FileCheckpoint(store, mounted)
	if err != nil {
		return err
	}
	m := &session.Mark{Label: workspace.FirstLine(in.Prompt, 80), Files: files}
	if in.SessionID != "" && a.Dialect != "" {
		c := &session.Coord{Session: in.SessionID, Agent: a.Name}
		if c.Seq, err = session.LastSeq(store, in.SessionID); err != nil {
			return err
		}
		if in.TranscriptPath != "" {
			// Only the end of the transcript is parsed: a hook's cost
			// must not grow with the session.
			n, prefix, err := transcript.MarkPosition(in.TranscriptPath, a.Dialect, in.Prompt)
			switch {
			case err == nil:
				c.Transcript, c.Lines, c.Prefix = in.TranscriptPath, int64(n), prefix
			case errors.Is(err, fs.ErrNotExist):
				c.Transcript = in.TranscriptPath // the first prompt: nothing said yet
			default:
				return err
			}
		}
		m.Conversation = c
	}
	_, err = session.AppendMark(store, m, now)
	return err
}

// compactJSON keeps a tool input as JSON on one line (nil if it is not).
func compactJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil
	}
	return buf.Bytes()
}

// pairCall gives the tool event of an agent that sends no call ids one: a
// PreToolUse a new id, derived from the session, the event's time, the
// tool and its input; a PostToolUse the id of the oldest call of the
// session still open with the same tool and input (the agent runs a call's
// Before and After hooks around it, so the oldest is the one that ran
// first).
func pairCall(store string, a *Agent, in *HookInput, now time.Time) error {
	switch in.Event {
	case "PreToolUse":
		if in.SessionID == "" {
			return fmt.Errorf("%s without session_id: its call cannot be paired with its result", a.eventName(in.Event))
		}
		ts := in.Timestamp
		if ts == "" {
			ts = now.UTC().Format(time.RFC3339Nano)
		}
		h := sha256.Sum256([]byte(in.SessionID + "\x00" + ts + "\x00" + in.ToolName + "\x00" + string(in.ToolInput)))
		in.ToolUseID = fmt.Sprintf("%s-%x", a.Name, h[:6])
	case "PostToolUse", "PostToolUseFailure":
		if in.SessionID == "" {
			return fmt.Errorf("%s without session_id: no call to pair it with", a.eventName(in.Event))
		}
		calls, err := session.OpenCallEvents(store, in.SessionID)
		if err != nil {
			return err
		}
		for _, c := range calls {
			if c.Tool == in.ToolName && sameJSON(c.Input, in.ToolInput) {
				in.ToolUseID = c.Call
				return nil
			}
		}
		return fmt.Errorf("%s of %s matches no open call of session %s", a.eventName(in.Event), in.ToolName, in.SessionID)
	}
	return nil
}

// sameJSON reports whether two JSON texts hold the same value (the log
// keeps a tool input compacted and escaped its own way).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return len(a) == 0 && len(b) == 0
	}
	return reflect.DeepEqual(x, y)
}

// closeReason is the close record's reason for a Post event: failed for
// a call the agent reports failed.
func closeReason(event string) string {
	if event == "PostToolUseFailure" {
		return index.ReasonFailed
	}
	return ""
}
