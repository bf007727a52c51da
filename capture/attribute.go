package capture

import (
	"slices"
	"strings"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/proc"
)

// Agent says who runs a window's tool call, so that writes made while
// several windows are open can be matched to the call that made them.
type Agent struct {
	// PID is the agent process that started the call; 0 when unknown.
	PID int
	// Command is the shell command the call runs; "" for a tool the agent
	// runs in its own process (an edit or write tool).
	Command string
	// Marked says that the call's processes carry WindowEnv=<window id>
	// in their environment (ckfs run sets it): they and their
	// descendants are the call's, also once reparented.
	Marked bool
	// Run is the agent's AgentRunEnv, read from its environment when the
	// window opens ("" when it has none): every process the agent starts
	// inherits it, also one that outlives its shell and is reparented
	// away from the agent.
	Run string
}

// WindowEnv is the environment variable that marks the processes of a
// window that ckfs run opened.
const WindowEnv = "CKFS_WINDOW"

// AgentRunEnv is the environment variable that ckfs agent sets, to a new
// id for each run, in the environment of the agent it starts.
const AgentRunEnv = "CKFS_AGENT_RUN"

// knows reports whether the window can tell its own processes.
func (w openWindow) knows() bool { return w.agent.PID != 0 || w.agent.Marked }

// recentMax is how many closed windows that know their process are kept
// for their background processes' later writes.
const recentMax = 64

// inProcess reports whether the agent process itself does the call's
// writes: a tool without a shell command, or a patch the agent intercepts
// from a shell call and applies itself (Codex's apply_patch).
func (a Agent) inProcess() bool {
	c := strings.TrimSpace(a.Command)
	return c == "" || strings.HasPrefix(c, "apply_patch")
}

// delegates reports whether an agent's tool hands its work to a subagent,
// whose own tool calls then run while it is open.
func delegates(tool string) bool { return tool == "Task" || tool == "Agent" }

// withoutDelegates drops, from several in-process candidates (indexes
// into r.windows), the calls that hand their work to a subagent: such a
// call writes nothing itself, the subagent's own calls do while it is
// open.
func (r *Recorder) withoutDelegates(set []int) []int {
	if len(set) < 2 {
		return set
	}
	return slices.DeleteFunc(set, func(i int) bool { return delegates(r.windows[i].tool) })
}

// owner is the window a path's changes in the current period belong to,
// and how it was told (index.ByProcess, index.ByGuess, or "" when only one
// window was open).
type owner struct{ window, by string }

// ownerFor returns the window that a first change by the process pid
// (a thread id, as FUSE reports it; 0 when unknown) belongs to.
//
// A window that knows its process (agent hooks name the agent and the
// command; ckfs run marks its command's environment) owns the writes of
// that process and its descendants, and no others: another writer is the
// user's (no window). A process that a call started and that writes after
// the call returned (a background command) is that call's still: its
// writes go to the closed window, a continuation of it. A window opened
// by hand, which knows no process, owns every write while it is the only
// one open. The writer is matched, in this order:
//
//   - by its environment: WindowEnv names an open or recently closed
//     window that ckfs run marked;
//   - by its ancestry, against each open window's agent: the agent process
//     itself wrote (the one open in-process call of that agent, its edit
//     tool, not counting a call that runs a subagent); a descendant of the agent whose command line, or an
//     ancestor's below the agent, holds the call's shell command, or the
//     call whose command holds the command line of the agent's child (a
//     shell that replaced itself with the command's last part);
//   - a descendant whose ancestry holds the shell command of a recently
//     closed call of that agent: that call's continuation;
//   - a descendant of the agent: the one shell call of that agent that is
//     open;
//   - a process no longer below the agent (its shell exited and it was
//     reparented: Claude Code's `cmd &`) that carries the agent's run id
//     (AgentRunEnv, which ckfs agent sets): the open call, or else the
//     recently closed one, of that run whose shell command its ancestry
//     holds, or holds a part of.
//
// With several windows open and no match, the write is credited to the
// newest window and marked a guess; with one window open that knows its
// process, or none, it is the user's.
func (r *Recorder) ownerFor(pid uint32) owner {
	if len(r.windows) == 0 && len(r.recent) == 0 {
		return owner{}
	}
	fallback := owner{}
	switch {
	case len(r.windows) == 1 && !r.windows[0].knows():
		fallback = owner{window: r.windows[0].id}
	case len(r.windows) > 1:
		fallback = owner{r.windows[len(r.windows)-1].id, index.ByGuess}
	}
	if r.procs == nil || pid == 0 {
		// Nothing to match with: as if no window knew its process.
		if len(r.windows) == 1 {
			return owner{window: r.windows[0].id}
		}
		return fallback
	}
	if len(r.windows) == 1 && !r.windows[0].knows() && len(r.recent) == 0 {
		return fallback
	}
	// The windows are the same for the whole period: a writer's answer is
	// too, so /proc is read once per writer and period, not per path.
	if o, ok := r.owners[pid]; ok {
		return o
	}
	o := r.matchOwner(pid, fallback)
	if r.owners == nil {
		r.owners = map[uint32]owner{}
	}
	r.owners[pid] = o
	return o
}

// matchOwner applies the rules of ownerFor to the writer pid.
func (r *Recorder) matchOwner(pid uint32, fallback owner) owner {
	by := ""
	if len(r.windows) > 1 {
		by = index.ByProcess
	}
	if id, ok := r.markedWindow(pid); ok {
		return owner{id, by}
	}
	chain := proc.Ancestry(r.procs, int(pid))
	depth := map[int]int{}
	for i, p := range chain {
		depth[p] = i
	}
	cmdlines := map[int]string{}
	cmdline := func(p int) string {
		if c, ok := cmdlines[p]; ok {
			return c
		}
		c, _ := r.procs.Cmdline(p)
		cmdlines[p] = normalize(c)
		return cmdlines[p]
	}
	// runs reports whether the writer's ancestry below the agent (at
	// depth k) holds the command want.
	runs := func(k int, want string) bool {
		return want != "" && slices.ContainsFunc(chain[:k], func(p int) bool { return strings.Contains(cmdline(p), want) })
	}
	var inproc, exact, partial, shells []int
	for i, w := range r.windows {
		k, ok := depth[w.agent.PID]
		if w.agent.PID == 0 || !ok {
			continue
		}
		if w.agent.inProcess() {
			if k == 0 {
				inproc = append(inproc, i)
			}
			continue
		}
		if k == 0 {
			continue // the agent wrote, and this call runs a shell
		}
		shells = append(shells, i)
		want := normalize(w.agent.Command)
		if runs(k, want) {
			exact = append(exact, i)
		} else if top := cmdline(chain[k-1]); want != "" && len(top) >= 2 && strings.Contains(want, top) {
			// The shell ran the command's last part in its own place
			// (bash -c 'a; b' execs b): the call's process is b.
			partial = append(partial, i)
		}
	}
	inproc = r.withoutDelegates(inproc)
	pick := func(set []int) owner {
		if len(set) == 1 {
			return owner{r.windows[set[0]].id, by}
		}
		return owner{r.windows[set[len(set)-1]].id, index.ByGuess}
	}
	for _, set := range [][]int{exact, partial, inproc} {
		if len(set) > 0 {
			return pick(set)
		}
	}
	// A background command of a call that has returned, newest first.
	for i := len(r.recent) - 1; i >= 0; i-- {
		w := r.recent[i]
		if k, ok := depth[w.agent.PID]; ok && k > 0 && !w.agent.inProcess() && runs(k, normalize(w.agent.Command)) {
			return owner{w.id, ""}
		}
	}
	if len(shells) > 0 {
		return pick(shells)
	}
	if o, ok := r.reparentedOwner(pid, chain, cmdline); ok {
		return o
	}
	return fallback
}

// reparentedOwner matches a writer that carries an agent's run id but is
// no longer its descendant to that run's call, open or recently closed,
// whose shell command the writer's ancestry holds (or holds a part of: a
// shell that replaced itself with the command's last part).
func (r *Recorder) reparentedOwner(pid uint32, chain []int, cmdline func(int) string) (owner, bool) {
	env, ok := r.procs.(proc.EnvReader)
	if !ok || !slices.ContainsFunc(r.windows, hasRun) && !slices.ContainsFunc(r.recent, hasRun) {
		return owner{}, false
	}
	run, ok := env.Env(int(pid), AgentRunEnv)
	if !ok || run == "" {
		return owner{}, false
	}
	by := ""
	if len(r.windows) > 1 {
		by = index.ByProcess
	}
	matches := func(w openWindow, whole bool) bool {
		want := normalize(w.agent.Command)
		if w.agent.Run != run || w.agent.inProcess() || want == "" {
			return false
		}
		return slices.ContainsFunc(chain, func(p int) bool {
			c := cmdline(p)
			return strings.Contains(c, want) || !whole && len(c) >= 2 && strings.Contains(want, c)
		})
	}
	for _, whole := range []bool{true, false} {
		for i := len(r.windows) - 1; i >= 0; i-- {
			if matches(r.windows[i], whole) {
				return owner{r.windows[i].id, by}, true
			}
		}
		for i := len(r.recent) - 1; i >= 0; i-- {
			if matches(r.recent[i], whole) {
				return owner{r.recent[i].id, ""}, true
			}
		}
	}
	return owner{}, false
}

func hasRun(w openWindow) bool { return w.agent.Run != "" }

// markedWindow is the window, open or recently closed, whose id the
// writer carries in its environment (CKFS_WINDOW, set by ckfs run for the
// processes of its command).
func (r *Recorder) markedWindow(pid uint32) (string, bool) {
	env, ok := r.procs.(proc.EnvReader)
	if !ok {
		return "", false
	}
	id, ok := env.Env(int(pid), WindowEnv)
	if !ok || id == "" {
		return "", false
	}
	for _, set := range [][]openWindow{r.windows, r.recent} {
		for _, w := range set {
			if w.id == id && w.agent.Marked {
				return w.id, true
			}
		}
	}
	return "", false
}

// normalize drops quotes, backslashes and white space, which shells and
// agents add or remove when they wrap a command (Claude Code runs
// eval 'cmd' with every ' written '"'"').
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\'', '"', '\\', ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, s)
}
