package capture

import (
	"errors"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
)

// procTable is a fake process table: pid -> parent and command line.
type procTable map[int]struct {
	ppid int
	cmd  string
}

func (p procTable) Parent(pid int) (int, int, error) {
	e, ok := p[pid]
	if !ok {
		return 0, 0, errors.New("no such process")
	}
	return pid, e.ppid, nil
}

func (p procTable) Cmdline(pid int) (string, error) {
	e, ok := p[pid]
	if !ok {
		return "", errors.New("no such process")
	}
	return e.cmd, nil
}

func TestOwnerFor(t *testing.T) {
	procs := procTable{
		100: {1, "node claude"},
		// Claude Code's Bash tool: bash -c ... eval 'cmd' with quotes rewritten.
		110: {100, `/bin/bash -c source snap.sh && eval 'sed -i '"'"'s/1/2/'"'"' calc.py' && pwd -P >| /tmp/cwd`},
		111: {110, "sed -i s/1/2/ calc.py"},
		120: {100, "/bin/bash -c make gen"},
		121: {120, "make gen"},
		122: {121, "/bin/sh -c ./gen.sh"},
		130: {100, "/bin/bash -c rm -f cache"}, // a shell of the agent no window runs
		200: {1, "codex"},
		210: {200, "/bin/bash -c echo a > a.txt"},
		211: {200, "/bin/bash -c echo a > a.txt"},
		212: {200, "rm NOTES.md"}, // bash -c 'sleep 1; rm NOTES.md' exec'd rm
		300: {1, "vim notes.txt"}, // the user's own editor
	}
	claudeSed := openWindow{id: "sed", agent: Agent{PID: 100, Command: "sed -i 's/1/2/' calc.py"}}
	claudeMake := openWindow{id: "make", agent: Agent{PID: 100, Command: "make gen"}}
	claudeEdit := openWindow{id: "edit", agent: Agent{PID: 100}}
	claudeWrite := openWindow{id: "write", agent: Agent{PID: 100}}
	claudeTask := openWindow{id: "task", tool: "Task", agent: Agent{PID: 100}}
	codexA1 := openWindow{id: "a1", agent: Agent{PID: 200, Command: "echo a > a.txt"}}
	codexA2 := openWindow{id: "a2", agent: Agent{PID: 200, Command: "echo a > a.txt"}}
	codexPatch := openWindow{id: "patch", agent: Agent{PID: 200, Command: "apply_patch <<'EOF'\n*** Begin Patch"}}
	codexRm := openWindow{id: "rm", agent: Agent{PID: 200, Command: "sleep 1; rm NOTES.md"}}
	manual := openWindow{id: "manual"}

	for _, tc := range []struct {
		name    string
		windows []openWindow
		pid     uint32
		want    owner
	}{
		{"no window", nil, 111, owner{}},
		{"the user's editor while one call runs is the user's", []openWindow{claudeSed}, 300, owner{}},
		{"the one call's own process", []openWindow{claudeSed}, 111, owner{window: "sed"}},
		{"a window opened by hand owns every write", []openWindow{manual}, 300, owner{window: "manual"}},
		{"shell command quoted by the agent", []openWindow{claudeSed, claudeMake, claudeEdit}, 111, owner{"sed", index.ByProcess}},
		{"a grandchild of the call's shell", []openWindow{claudeSed, claudeMake, claudeEdit}, 122, owner{"make", index.ByProcess}},
		{"the agent itself: its one edit call", []openWindow{claudeSed, claudeEdit, claudeMake}, 100, owner{"edit", index.ByProcess}},
		{"the agent itself, two edit calls", []openWindow{claudeEdit, claudeWrite, claudeSed}, 100, owner{"write", index.ByGuess}},
		{"a subagent's edit call while its Task call is open", []openWindow{claudeEdit, claudeTask}, 100, owner{"edit", index.ByProcess}},
		{"the agent itself while only a Task call is open", []openWindow{claudeTask, claudeSed}, 100, owner{"task", index.ByProcess}},
		{"an unmatched shell of the agent, one shell call", []openWindow{claudeSed, claudeEdit}, 130, owner{"sed", index.ByProcess}},
		{"an unmatched shell of the agent, two shell calls", []openWindow{claudeSed, claudeMake, claudeEdit}, 130, owner{"make", index.ByGuess}},
		{"the same command twice", []openWindow{codexA1, codexA2}, 210, owner{"a2", index.ByGuess}},
		{"a patch the agent applies itself", []openWindow{codexA1, codexPatch}, 200, owner{"patch", index.ByProcess}},
		{"a shell that replaced itself", []openWindow{codexA1, codexRm}, 212, owner{"rm", index.ByProcess}},
		{"a shell next to a patch", []openWindow{codexPatch, codexA1}, 211, owner{"a1", index.ByProcess}},
		{"the user's editor", []openWindow{claudeSed, claudeEdit}, 300, owner{"edit", index.ByGuess}},
		{"a process gone", []openWindow{claudeSed, claudeEdit}, 999, owner{"edit", index.ByGuess}},
		{"manual windows", []openWindow{manual, claudeSed}, 111, owner{"sed", index.ByProcess}},
		{"writer unknown", []openWindow{claudeSed, claudeEdit}, 0, owner{"edit", index.ByGuess}},
	} {
		r := &Recorder{windows: tc.windows, procs: procs}
		if got := r.ownerFor(tc.pid); got != tc.want {
			t.Errorf("%s: ownerFor(%d) = %+v, want %+v", tc.name, tc.pid, got, tc.want)
		}
	}
	r := &Recorder{windows: []openWindow{claudeSed, claudeEdit}}
	if got := r.ownerFor(111); got != (owner{"edit", index.ByGuess}) {
		t.Errorf("without a process table: %+v, want a guess", got)
	}

	// Background commands: a process a call started writes after the call
	// returned, while another call runs or none.
	runA := openWindow{id: "run-a", agent: Agent{Marked: true}}
	runB := openWindow{id: "run-b", agent: Agent{Marked: true}}
	env := envTable{procs, map[int]string{400: "run-a", 401: "run-b"}, nil}
	procs[400] = struct {
		ppid int
		cmd  string
	}{1, "sh -c sleep 1; echo late > bg.txt"} // reparented to init
	procs[401] = struct {
		ppid int
		cmd  string
	}{1, "sh -c echo b > b.txt"}
	for _, tc := range []struct {
		name            string
		windows, recent []openWindow
		pid             uint32
		want            owner
	}{
		{"ckfs run's command, reparented", []openWindow{runB}, nil, 401, owner{window: "run-b"}},
		{"ckfs run's background command during the next run", []openWindow{runB}, []openWindow{runA}, 400, owner{window: "run-a"}},
		{"ckfs run's background command, no window open", nil, []openWindow{runA}, 400, owner{window: "run-a"}},
		{"the user's editor during a run", []openWindow{runB}, []openWindow{runA}, 300, owner{}},
		{"an agent's background shell during its edit call", []openWindow{claudeEdit}, []openWindow{claudeMake}, 122, owner{window: "make"}},
		{"an agent's background shell, no window open", nil, []openWindow{claudeMake}, 122, owner{window: "make"}},
		{"the user's editor after the calls returned", nil, []openWindow{claudeMake, runA}, 300, owner{}},
	} {
		r := &Recorder{windows: tc.windows, recent: tc.recent, procs: env}
		if got := r.ownerFor(tc.pid); got != tc.want {
			t.Errorf("%s: ownerFor(%d) = %+v, want %+v", tc.name, tc.pid, got, tc.want)
		}
	}
}

// envTable adds environments to a procTable.
type envTable struct {
	procTable
	env map[int]string // pid -> its WindowEnv
	run map[int]string // pid -> its AgentRunEnv
}

func (e envTable) Env(pid int, key string) (string, bool) {
	m := e.env
	if key == AgentRunEnv {
		m = e.run
	}
	v, ok := m[pid]
	return v, ok
}

// A process an agent's shell call left running outlives the shell and is
// reparented (Claude Code starts each call's shell in a session of its
// own, so `cmd &` leaves cmd an orphan): it carries the run id ckfs agent
// gave the agent, and its command line matches the call's.
func TestOwnerForReparented(t *testing.T) {
	procs := procTable{
		100: {1, "node claude"},
		500: {1, "npm run dev"},                                             // the call's npm, reparented
		501: {500, "node server.js"},                                        // and what it started since
		502: {1, "npm run dev"},                                             // the same command, from another run
		503: {1, "npm run dev"},                                             // the user's own, no run id
		504: {1, "python other.py"},                                         // of the run, but no call's command
		505: {1, "/bin/bash -c eval '(sleep 1; printf late > late.txt) &'"}, // a subshell of the call's shell
	}
	env := envTable{procs, nil, map[int]string{100: "run-1", 500: "run-1", 501: "run-1", 502: "run-2", 504: "run-1", 505: "run-1"}}
	dev := openWindow{id: "dev", agent: Agent{PID: 100, Command: "npm run dev > dev.log 2>&1 &", Run: "run-1"}}
	late := openWindow{id: "late", agent: Agent{PID: 100, Command: "(sleep 1; printf late > late.txt) &", Run: "run-1"}}
	edit := openWindow{id: "edit", agent: Agent{PID: 100, Run: "run-1"}}
	for _, tc := range []struct {
		name            string
		windows, recent []openWindow
		pid             uint32
		want            owner
	}{
		{"the call's reparented process, the call open beside another", []openWindow{dev, edit}, nil, 500, owner{"dev", index.ByProcess}},
		{"the call's reparented process, the call closed", nil, []openWindow{dev}, 500, owner{window: "dev"}},
		{"a child it started since", []openWindow{edit}, []openWindow{dev}, 501, owner{window: "dev"}},
		{"a subshell holding the whole command", nil, []openWindow{dev, late}, 505, owner{window: "late"}},
		{"the same command from another run is the user's", nil, []openWindow{dev}, 502, owner{}},
		{"the same command without a run id is the user's", nil, []openWindow{dev}, 503, owner{}},
		{"a process of the run that runs no call's command is the user's", nil, []openWindow{dev}, 504, owner{}},
	} {
		r := &Recorder{windows: tc.windows, recent: tc.recent, procs: env}
		if got := r.ownerFor(tc.pid); got != tc.want {
			t.Errorf("%s: ownerFor(%d) = %+v, want %+v", tc.name, tc.pid, got, tc.want)
		}
	}
}
