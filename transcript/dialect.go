package transcript

import (
	"fmt"
	"slices"
	"time"
)

// The agents whose transcripts this package reads.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
	Qwen   = "qwen"
)

// dialect is what differs between the transcript formats.
type dialect struct {
	// parse reads one line; the first session id seen is kept in *session.
	parse func(line []byte, session *string) (entry, error)
	// fork writes the kept lines of t for the child session.
	fork func(t *Transcript, keep []int, child string, summary *summaryAt, now time.Time) ([][]byte, error)
	// path names the child's transcript.
	path func(t *Transcript, child string, now time.Time) string
	// resume is the command that resumes a session, before its id.
	resume string
	// summaries: the summarize fork modes are supported.
	summaries bool
	// logOf is the transcript the agent writes a session's turns to,
	// given the path its hooks name (nil: that path).
	logOf func(path, session string) string
	// metaBeforePrompt: the agent writes metadata (a header, state
	// patches) before it records a prompt, all of it part of that turn; a
	// cut before the prompt is made before that metadata too.
	metaBeforePrompt bool
}

var dialects = map[string]*dialect{
	Claude: {parse: parseClaude, fork: (*Transcript).claudeFork, path: (*Transcript).claudePath,
		resume: "claude --resume ", summaries: true},
	Codex: {parse: parseCodex, fork: (*Transcript).codexFork, path: (*Transcript).codexPath,
		resume: "codex resume ", summaries: true},
	Gemini: {parse: parseGemini, fork: (*Transcript).geminiFork, path: (*Transcript).geminiPath,
		resume: "gemini --resume ", metaBeforePrompt: true, logOf: geminiLogOf},
	Qwen: {parse: parseQwen, fork: (*Transcript).qwenFork, path: (*Transcript).claudePath,
		resume: "qwen --resume "},
}

// Dialects are the agents whose transcripts this package reads.
func Dialects() []string {
	names := make([]string, 0, len(dialects))
	for n := range dialects {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// dialectOf returns the dialect of agent, or an error naming those known.
func dialectOf(agent string) (*dialect, error) {
	if d := dialects[agent]; d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("unknown agent %q: ckfs reads the transcripts of %v", agent, Dialects())
}

// LogOf returns the transcript that agent writes session's turns to, given
// the path its hook events name: the same path, but for Gemini CLI, whose
// SessionStart names a file of the minute a resuming process started while
// the turns go on in the file it resumed.
func LogOf(path, agent, session string) string {
	if d := dialects[agent]; d != nil && d.logOf != nil && path != "" {
		return d.logOf(path, session)
	}
	return path
}
