package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// conversation is the session an agent goes on with: "" before the first
// turn, a fork's after a rewind of the conversation.
type conversation struct{ sid string }

func (c *conversation) fork(child string) { c.sid = child }

// claudeLong drives Claude Code: shell calls are its Bash tool (commands
// left running through run_in_background or with &), its own writes the Write tool,
// over a file it read first in a reply of its own.
type claudeLong struct {
	*claudeRun
	conversation
}

func (c *claudeLong) callID(turn, n int) string { return fmt.Sprintf("toolu_%02d%03dLong", turn, n) }
func (c *claudeLong) named() bool               { return true }
func (c *claudeLong) requests() int             { return len(c.api.agentRequests()) }
func (c *claudeLong) sent(n int) string         { return userTexts(c.api.agentRequests()[n]) }

func (c *claudeLong) turn(prompt string, replies [][]longCall) (added int) {
	var script []standInReply
	for _, calls := range replies {
		var sc []standInCall
		for _, lc := range calls {
			if lc.shell == "" {
				script = append(script, standInReply{text: "Reading.", calls: []standInCall{{lc.id + "R", "Read", map[string]any{"file_path": lc.path}}}})
				added++
				sc = append(sc, standInCall{lc.id, "Write", map[string]any{"file_path": lc.path, "content": lc.content}})
				continue
			}
			in := map[string]any{"command": lc.shell, "description": "step"}
			switch {
			case lc.background && len(script)%2 == 0:
				in["run_in_background"] = true
			case lc.background:
				// Left running by the shell, which exits: reparented
				// away from the agent before it writes.
				in["command"] = "(" + lc.shell + ") >/dev/null 2>&1 &"
			}
			sc = append(sc, standInCall{lc.id, "Bash", in})
		}
		script = append(script, standInReply{text: "Working.", calls: sc})
	}
	c.api.queue(append(script, standInReply{text: "Done."})...)
	args := []string{"-p", prompt, "--allowedTools", "Bash,Write,Read"}
	if c.sid != "" {
		args = append([]string{"-p", "--resume", c.sid}, args[1:]...)
	}
	c.agent(args...)
	if c.sid == "" {
		sessions := c.transcripts()
		if len(sessions) != 1 {
			c.w.t.Fatalf("transcripts after turn one: %v", sessions)
		}
		c.sid = strings.TrimSuffix(filepath.Base(sessions[0]), ".jsonl")
	}
	return added
}

// codexLong drives Codex: shell calls are exec_command, its own writes a
// patch that replaces the file's first line.
type codexLong struct {
	*codexRun
	conversation
}

func (c *codexLong) callID(turn, n int) string { return fmt.Sprintf("call_%02d%03dLong", turn, n) }
func (c *codexLong) named() bool               { return true }
func (c *codexLong) requests() int             { return len(c.api.allRequests()) }
func (c *codexLong) sent(n int) string {
	b, _ := json.Marshal(c.api.allRequests()[n]["input"])
	return string(b)
}

func (c *codexLong) turn(prompt string, replies [][]longCall) int {
	var script []responsesReply
	for _, calls := range replies {
		var rc []responsesCall
		for _, lc := range calls {
			switch {
			case lc.shell == "":
				b, _ := os.ReadFile(lc.path)
				first, _, _ := strings.Cut(string(b), "\n")
				rel, _ := filepath.Rel(c.w.root, lc.path)
				rc = append(rc, patchCall(lc.id, fmt.Sprintf("*** Update File: %s\n@@\n-%s\n+%s", rel, first, lc.content)))
			default:
				// (A command left running: Codex ends a call's process
				// group when the call returns, so it runs to its end.)
				rc = append(rc, execCall(lc.id, lc.shell))
			}
		}
		script = append(script, responsesReply{text: "Working.", calls: rc})
	}
	c.api.queue(append(script, responsesReply{text: "Done."})...)
	if c.sid != "" {
		c.agent("resume", c.sid, prompt)
		return 0
	}
	c.agent(prompt)
	rs := c.rollouts()
	if len(rs) != 1 {
		c.w.t.Fatalf("rollouts after turn one: %v", rs)
	}
	id := strings.TrimSuffix(filepath.Base(rs[0]), ".jsonl")
	c.sid = id[len(id)-36:]
	return 0
}

// qwenLong drives Qwen Code: shell calls are run_shell_command, its own
// writes write_file.
type qwenLong struct {
	*cliRun
	api *chatStandIn
	conversation
}

func (c *qwenLong) callID(turn, n int) string { return fmt.Sprintf("call_%02d%03dLong", turn, n) }
func (c *qwenLong) named() bool               { return false }
func (c *qwenLong) requests() int             { return len(c.api.seen()) }
func (c *qwenLong) sent(n int) string         { return chatMessages(c.api.seen()[n]) }

func (c *qwenLong) turn(prompt string, replies [][]longCall) int {
	var script []modelReply
	for _, calls := range replies {
		var mc []modelCall
		for _, lc := range calls {
			if lc.shell == "" {
				mc = append(mc, modelCall{id: lc.id, name: "write_file", args: map[string]any{"file_path": lc.path, "content": lc.content}})
				continue
			}
			// (A command left running runs to its end, as with Codex.)
			mc = append(mc, modelCall{id: lc.id, name: "run_shell_command", args: map[string]any{"command": lc.shell, "is_background": false}})
		}
		script = append(script, modelReply{text: "Working.", calls: mc})
	}
	c.api.queue(append(script, modelReply{text: "Done."})...)
	if c.sid != "" {
		c.agent("--resume", c.sid, "-p", prompt, "--yolo")
		return 0
	}
	c.agent("-p", prompt, "--yolo")
	ts, _ := filepath.Glob(filepath.Join(c.home, ".qwen", "projects", "*", "chats", "*.jsonl"))
	if len(ts) != 1 {
		c.w.t.Fatalf("qwen transcripts after turn one: %v", ts)
	}
	c.sid = strings.TrimSuffix(filepath.Base(ts[0]), ".jsonl")
	return 0
}
