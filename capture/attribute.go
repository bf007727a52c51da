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
}

// inProcess reports whether the agent process itself does the call's
// writes: a tool without a shell command, or a patch the agent intercepts
// from a shell call and applies itself (Codex's apply_patch).
func (a Agent) inProcess() bool {
	c := strings.TrimSpace(a.Command)
	return c == "" || strings.HasPrefix(c, "apply_patch")
}

// owner is the window a path's changes in the current period belong to,
// and how it was told (index.ByProcess, index.ByGuess, or "" when only one
// window was open).
type owner struct{ window, by string }

// ownerFor returns the window that a first change by the process pid
// (a thread id, as FUSE reports it; 0 when unknown) belongs to. With one
// window open or none there is nothing to tell. With several, the writer's
// ancestry is matched against each window's agent:
//
//   - the agent process itself wrote: the one open in-process call of that
//     agent (its edit tool);
//   - a descendant of the agent wrote: the shell call whose command is on
//     the command line of the writer or of an ancestor below the agent;
//     else the call whose command holds the command line of the agent's
//     child (a shell that replaced itself with the command's last part);
//     else the one shell call of that agent that is open.
//
// Anything else (two matches, a process no agent started, no /proc) is
// credited to the newest window and marked a guess.
func (r *Recorder) ownerFor(pid uint32) owner {
	switch len(r.windows) {
	case 0:
		return owner{}
	case 1:
		return owner{window: r.windows[0].id}
	}
	guess := owner{r.windows[len(r.windows)-1].id, index.ByGuess}
	if r.procs == nil || pid == 0 {
		return guess
	}
	// The windows are the same for the whole period: a writer's answer is
	// too, so /proc is read once per writer and period, not per path.
	if o, ok := r.owners[pid]; ok {
		return o
	}
	o := r.matchOwner(pid, guess)
	if r.owners == nil {
		r.owners = map[uint32]owner{}
	}
	r.owners[pid] = o
	return o
}

// matchOwner applies the rules of ownerFor to the writer pid's ancestry.
func (r *Recorder) matchOwner(pid uint32, guess owner) owner {
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
		if want == "" {
			continue
		}
		if slices.ContainsFunc(chain[:k], func(p int) bool { return strings.Contains(cmdline(p), want) }) {
			exact = append(exact, i)
		} else if top := cmdline(chain[k-1]); len(top) >= 2 && strings.Contains(want, top) {
			// The shell ran the command's last part in its own place
			// (bash -c 'a; b' execs b): the call's process is b.
			partial = append(partial, i)
		}
	}
	for _, set := range [][]int{exact, partial, inproc, shells} {
		switch len(set) {
		case 0:
			continue
		case 1:
			return owner{r.windows[set[0]].id, index.ByProcess}
		default:
			return owner{r.windows[set[len(set)-1]].id, index.ByGuess}
		}
	}
	return guess
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
