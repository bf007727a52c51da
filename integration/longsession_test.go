package integration

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A long, messy session with a real agent CLI: turns of random tool calls
// (shell edits, renames, deletes, copies, new directories, mode changes,
// failing commands, git commits, checkouts and stashes, the agent's own
// file writes, commands left running in the background); between turns
// the user edits through the mount, or rewinds the files to an earlier
// mark (and undoes that, or goes on from there, now and then with the
// conversation forked there, the resumed fork checked to send exactly the
// turns kept). Afterwards no window is open, the store verifies, every
// call has its window, and the files rewind to every mark, in a random
// order (refused at first where that would drop an edit of the user's,
// then forced), and come back with an undo. CKFS_LONG_TURNS sets the
// number of turns (scripts/stress --long runs many); CKFS_LONG_SEED
// replays a run (its seed is logged).
func TestRealClaudeLongSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	longSession(t, 4, func(w *workspace) longAgent { return &claudeLong{claudeRun: newClaudeRun(t, w)} })
}

// The same with the real Qwen Code CLI, whose hooks carry no call id.
func TestRealQwenLongSession(t *testing.T) {
	t.Parallel()
	// (Qwen Code takes about 7 s a turn here: two turns in go test.)
	longSession(t, 2, func(w *workspace) longAgent {
		c, api := newQwenRun(t, w)
		return &qwenLong{cliRun: c, api: api}
	})
}

// The same with the real Codex CLI, whose own writes are patches it
// applies in its process.
func TestRealCodexLongSession(t *testing.T) {
	t.Parallel()
	longSession(t, 4, func(w *workspace) longAgent { return &codexLong{codexRun: newCodexRun(t, w)} })
}

// longCall is one tool call of a long session.
type longCall struct {
	id         string
	shell      string // the shell command; "" for a write of the agent's own
	background bool   // the shell command is left running when the call returns
	path       string // the file the agent writes (absolute), which exists
	content    string // what it writes there
}

// longAgent is a real agent CLI as the long session drives it.
type longAgent interface {
	// callID names the nth tool call of a turn; named says whether the
	// call's window carries that id (an agent whose hooks carry no call
	// id gets windows of ckfs's naming).
	callID(turn, n int) string
	named() bool
	// turn queues the model's replies (tool calls, in order) and runs one
	// turn of the conversation going on with prompt; it returns how many
	// tool calls it added of its own (a read before a write).
	turn(prompt string, replies [][]longCall) (added int)
	// fork goes on from the conversation child from the next turn on.
	fork(child string)
	// requests is how many model requests were made so far, and sent what
	// the nth of them sent.
	requests() int
	sent(n int) string
}

func longSession(t *testing.T, turns int, start func(*workspace) longAgent) {
	if n, err := strconv.Atoi(os.Getenv("CKFS_LONG_TURNS")); err == nil && n > 0 {
		turns = n
	}
	seed := uint64(time.Now().UnixNano())
	if n, err := strconv.ParseUint(os.Getenv("CKFS_LONG_SEED"), 10, 64); err == nil {
		seed = n
	}
	t.Logf("%d turns, seed %d (CKFS_LONG_SEED=%d replays it)", turns, seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	w := mountWorkspace(t, `mkdir -p src docs && printf 'a = 1\nb = 2\n' > src/a.py && printf 'def f():\n    return 1\n' > src/b.py && printf '# Readme\nabc\n' > docs/README.md && printf 'x\n' > top.txt && git init -q && git add -A && `+gitCommit+` -qm init`)
	agent := start(w)
	trees := map[int]string{}
	var ids []string
	var prompts []string            // every prompt sent
	var lineage []string            // the prompts of the conversation going on
	lineageAt := map[int][]string{} // and as it was at each mark
	forked := false                 // whether the turn goes on from a fork
	call, extra := 0, 0
	var late []string // what the background commands of the last turn write
	var userEdits []userEdit
	for turn := 1; turn <= turns; turn++ {
		// A command left running in the background by the turn before
		// writes its file before the turn's mark: wait for it.
		waitForFiles(t, w.root, late)
		late = nil
		if turn > 1 && rng.IntN(5) == 0 {
			// The user takes the files back to an earlier mark (one after
			// their own last edit, so nothing of theirs is dropped), now
			// and then the conversation too, going on from its fork; or
			// looks and undoes it.
			mark := 1
			for _, e := range userEdits {
				mark = max(mark, e.turn)
			}
			mark += rng.IntN(turn - mark)
			args := []string{"rewind", "--mark", strconv.Itoa(mark), "--files"}
			fork := mark > 1 && rng.IntN(2) == 0
			if fork {
				args = append(args, "--conversation", "--json")
			}
			now := trackedTree(t, w.root)
			out, err := w.ckfsErr(args...)
			if err != nil {
				t.Fatalf("%s, before turn %d: %v\n%s\nlog:\n%s", strings.Join(args, " "), turn, err, out, w.ckfs("log", "--all"))
			}
			if got := trackedTree(t, w.root); got != trees[mark] {
				t.Fatalf("%s, before turn %d: files\n%s\nwant\n%s", strings.Join(args, " "), turn, got, trees[mark])
			}
			t.Logf("before turn %d: %s", turn, strings.Join(args, " "))
			switch {
			case fork:
				var r rewindJSON
				json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &r)
				if r.Conversation == nil || !r.Conversation.Written {
					t.Fatalf("no conversation fork at mark %d:\n%s", mark, out)
				}
				agent.fork(r.Conversation.Child)
				lineage, forked = slices.Clone(lineageAt[mark]), true
			case now != trees[mark] && rng.IntN(2) == 0: // (a rewind that changed nothing has nothing to undo)
				w.ckfs("rewind", "--files", "--undo")
				if got := trackedTree(t, w.root); got != now {
					t.Fatalf("before turn %d: the undo of the rewind to mark %d left\n%s\nwant\n%s", turn, mark, got, now)
				}
			}
		}
		if rng.IntN(3) == 0 {
			f := pick(rng, regularFiles(t, w.root))
			userEdits = append(userEdits, userEdit{turn, f})
			w.sh(fmt.Sprintf("printf 'the user, before turn %d\\n' >> %s", turn, f))
		}
		trees[turn] = trackedTree(t, w.root)
		lineageAt[turn] = slices.Clone(lineage)
		var replies [][]longCall
		for r := 0; r < 1+rng.IntN(3); r++ {
			var calls []longCall
			for k := 0; k < 1+rng.IntN(2); k++ {
				call++
				c := longCall{id: agent.callID(turn, call)}
				ids = append(ids, c.id)
				files := regularFiles(t, w.root)
				if rng.IntN(10) == 9 && r == 0 && k == 0 && len(files) > 0 {
					// The agent's own write, in the turn's first reply, while
					// the file is still there.
					c.path, c.content = filepath.Join(w.root, pick(rng, files)), fmt.Sprintf("rewritten by %s\n", c.id)
					calls = append(calls, c)
					break
				}
				c.shell, c.background = randomShell(rng, c.id, turn, files)
				if c.background {
					late = append(late, lateFile(c.id))
				}
				calls = append(calls, c)
			}
			replies = append(replies, calls)
		}
		prompt := fmt.Sprintf("Turn %d: keep going", turn)
		before := agent.requests()
		extra += agent.turn(prompt, replies)
		if forked {
			// Resuming the fork sent the model exactly the turns kept.
			sent := agent.sent(before)
			for _, p := range prompts {
				if kept := slices.Contains(lineage, p); kept != strings.Contains(sent, p) {
					t.Errorf("turn %d, resuming a fork: %q kept %v, sent %v", turn, p, kept, !kept)
				}
			}
			forked = false
		}
		prompts, lineage = append(prompts, prompt), append(lineage, prompt)
	}
	waitForFiles(t, w.root, late)
	final := trackedTree(t, w.root)

	deadline := time.Now().Add(15 * time.Second)
	for st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0; st = w.status() {
		if time.Now().After(deadline) {
			t.Fatalf("windows left open after the session: %+v", st.Daemon)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := w.ckfsErr("verify"); err != nil {
		t.Fatalf("ckfs verify after the session: %v\n%s", err, out)
	}
	log := w.ckfs("log", "--all")
	for _, id := range ids {
		if agent.named() && !strings.Contains(log, "window "+id) {
			t.Errorf("log lacks the window of %s:\n%s", id, log)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^\s+window \S+  `).FindAllString(log, -1)); n != len(ids)+extra {
		t.Errorf("%d windows for %d calls:\n%s", n, len(ids)+extra, log)
	}
	for _, mark := range rng.Perm(turns) {
		mark++
		// A rewind that would take back an edit of the user's made
		// since the mark (the file is not as it was then: the rewind
		// changes it) is refused, and changes nothing; --force takes it.
		args := []string{"rewind", "--mark", strconv.Itoa(mark), "--files"}
		if slices.ContainsFunc(userEdits, func(e userEdit) bool {
			return e.turn > mark && treeLine(final, e.path) != treeLine(trees[mark], e.path)
		}) {
			out, err := w.ckfsErr(args...)
			if code := exitCode(err); code != 3 || !strings.Contains(out, "your own edits") {
				t.Fatalf("rewind to mark %d, over an edit of the user's: exit %d, want 3 (refused)\n%s", mark, code, out)
			}
			if got := trackedTree(t, w.root); got != final {
				t.Fatalf("a refused rewind to mark %d changed the files:\n%s", mark, got)
			}
			args = append(args, "--force")
		}
		out, err := w.ckfsErr(args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s\nlog:\n%s", strings.Join(args, " "), err, out, log)
		}
		if got := trackedTree(t, w.root); got != trees[mark] {
			t.Fatalf("mark %d: files\n%s\nwant\n%s\nlog:\n%s", mark, got, trees[mark], log)
		}
		if trees[mark] != final {
			w.ckfs("rewind", "--files", "--undo")
			if got := trackedTree(t, w.root); got != final {
				t.Fatalf("mark %d: undo did not bring the files back:\n%s", mark, got)
			}
		}
	}
	if out, err := w.ckfsErr("verify"); err != nil {
		t.Fatalf("ckfs verify after the rewinds: %v\n%s", err, out)
	}
}

// randomShell is a shell command of the call id over files (paths
// relative to the workspace): an edit, a rename, a delete, a copy, a new
// directory, a mode change, a command that fails half way, git, or one
// left running in the background (writing lateFile(id) after the call
// returned).
func randomShell(rng *rand.Rand, id string, turn int, files []string) (cmd string, background bool) {
	if len(files) == 0 {
		return fmt.Sprintf("mkdir -p gen && printf 'made by %s\\n' > gen/%s.txt", id, id), false
	}
	f := pick(rng, files)
	switch rng.IntN(12) {
	case 0:
		return fmt.Sprintf("sed -i 's/1/%d/; s/x/y/' %s", turn, f), false
	case 1:
		return fmt.Sprintf("mv %s %s.moved", f, f), false
	case 2:
		return fmt.Sprintf("rm %s", f), false
	case 3:
		return fmt.Sprintf("cp %s %s.copy", f, f), false
	case 4:
		return fmt.Sprintf("chmod +x %s && printf '%s\\n' >> %s", f, id, f), false
	case 5:
		return fmt.Sprintf("printf 'half of %s\\n' >> %s; exit 3", id, f), false
	case 6:
		return fmt.Sprintf("mkdir -p d%d/e && mv %s d%d/e/", turn, f, turn), false
	case 7:
		return fmt.Sprintf("sleep 0.3; printf 'late %s\\n' > %s", id, lateFile(id)), true
	case 8:
		return fmt.Sprintf("git add -A && %s -qm 'turn %d' && git checkout -q -- %s", gitCommit, turn, f), false
	case 9:
		return "git stash -q && git stash pop -q", false
	case 10:
		return fmt.Sprintf("git checkout -q -- %s", f), false
	}
	return fmt.Sprintf("mkdir -p gen && printf 'made by %s\\n' > gen/%s.txt", id, id), false
}

// lateFile is what the background command of the call id writes.
func lateFile(id string) string { return "bg-" + id + ".txt" }

// userEdit is a file the user changed through the mount before a turn.
type userEdit struct {
	turn int
	path string
}

// treeLine is what a workTree says of path, "" when it lists none.
func treeLine(tree, path string) string {
	for _, line := range strings.Split(tree, "\n") {
		if strings.HasPrefix(line, path+" ") {
			return line
		}
	}
	return ""
}

// gitCommit commits as someone (the test's HOME has no git identity).
const gitCommit = "git -c user.name=agent -c user.email=agent@example.com commit"

// trackedTree is workTree without git's own directory, which ckfs does not
// capture.
func trackedTree(t *testing.T, root string) string {
	var keep []string
	for _, line := range strings.Split(workTree(t, root), "\n") {
		if !strings.HasPrefix(line, ".git/") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// waitForFiles waits until each of names (relative to root) exists.
func waitForFiles(t *testing.T, root string, names []string) {
	t.Helper()
	for _, n := range names {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err := os.Lstat(filepath.Join(root, n)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a background command did not write %s in 30 s", n)
			}
		}
	}
}

// regularFiles lists the regular files of the workspace, relative, sorted.
func regularFiles(t *testing.T, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func pick(rng *rand.Rand, s []string) string {
	if len(s) == 0 {
		return "top.txt"
	}
	return s[rng.IntN(len(s))]
}
