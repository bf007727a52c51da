package integration

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A long, messy session with the real Claude Code CLI: turns of random
// tool calls (shell edits, renames, deletes, copies, new directories,
// mode changes, failing commands, git commits, checkouts and stashes, the
// Write tool over files it read, commands left running in the background);
// between turns the user edits through the mount, or rewinds the files to
// an earlier mark (and undoes that, or goes on from there, now and then
// with the conversation forked there). Afterwards no window is open, the store verifies,
// every call has its window, and the files rewind to every mark, in a
// random order (refused at first where that would drop an edit of the
// user's, then forced), and come back with an undo. CKFS_LONG_TURNS sets the
// number of turns (scripts/stress --long runs many); CKFS_LONG_SEED
// replays a run (its seed is logged).
func TestRealClaudeLongSession(t *testing.T) {
	t.Parallel() // its own workspace, daemon and server: runs beside the other long sessions
	turns := 6
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
	c := newClaudeRun(t, w)
	trees := map[int]string{}
	var ids []string
	var prompts []string            // every prompt sent
	var lineage []string            // the prompts of the conversation going on
	lineageAt := map[int][]string{} // and as it was at each mark
	forked := false                 // whether the turn goes on from a fork
	sid := ""
	call := 0
	var late []string   // what the background commands of the last turn write
	var userEdits []int // the turns before which the user edited a file
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
			mark := max(1, slices.Max(append([]int{0}, userEdits...)))
			mark += rng.IntN(turn - mark)
			args := []string{"rewind", "--mark", strconv.Itoa(mark), "--files"}
			fork := sid != "" && mark > 1 && rng.IntN(2) == 0
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
				sid = r.Conversation.Child
				lineage, forked = slices.Clone(lineageAt[mark]), true
			case now != trees[mark] && rng.IntN(2) == 0: // (a rewind that changed nothing has nothing to undo)
				w.ckfs("rewind", "--files", "--undo")
				if got := trackedTree(t, w.root); got != now {
					t.Fatalf("before turn %d: the undo of the rewind to mark %d left\n%s\nwant\n%s", turn, mark, got, now)
				}
			}
		}
		if rng.IntN(3) == 0 {
			userEdits = append(userEdits, turn)
			f := pick(rng, regularFiles(t, w.root))
			w.sh(fmt.Sprintf("printf 'the user, before turn %d\\n' >> %s", turn, f))
		}
		trees[turn] = trackedTree(t, w.root)
		lineageAt[turn] = slices.Clone(lineage)
		var replies []standInReply
		for r := 0; r < 1+rng.IntN(3); r++ {
			var calls []standInCall
			for k := 0; k < 1+rng.IntN(2); k++ {
				call++
				id := fmt.Sprintf("toolu_%02d%03dLong", turn, call)
				files := regularFiles(t, w.root)
				kind := rng.IntN(10)
				if kind == 9 && r == 0 && k == 0 && len(files) > 0 {
					// The Write tool over a file: Claude Code wants it read
					// first, in a reply of its own (the turn's first, while
					// the file is still there).
					f := pick(rng, files)
					abs := filepath.Join(w.root, f)
					replies = append(replies, standInReply{text: "Reading.", calls: []standInCall{{id + "R", "Read", map[string]any{"file_path": abs}}}})
					calls = append(calls, standInCall{id, "Write", map[string]any{"file_path": abs, "content": fmt.Sprintf("rewritten by %s\n", id)}})
					ids = append(ids, id)
					break
				}
				bash, bg := randomBashCall(rng, id, turn, files)
				calls = append(calls, bash)
				if bg != "" {
					late = append(late, bg)
				}
				ids = append(ids, id)
			}
			replies = append(replies, standInReply{text: "Working.", calls: calls})
		}
		replies = append(replies, standInReply{text: fmt.Sprintf("Turn %d done.", turn)})
		c.api.queue(replies...)
		prompt := fmt.Sprintf("Turn %d: keep going", turn)
		args := []string{"-p", prompt, "--allowedTools", "Bash,Write,Read"}
		if sid != "" {
			args = append([]string{"-p", "--resume", sid}, args[1:]...)
		}
		before := len(c.api.agentRequests())
		c.agent(args...)
		if forked {
			// Resuming the fork sent the model exactly the turns kept.
			sent := userTexts(c.api.agentRequests()[before])
			for _, p := range prompts {
				if kept := slices.Contains(lineage, p); kept != strings.Contains(sent, p) {
					t.Errorf("turn %d, resuming a fork: %q kept %v, sent %v", turn, p, kept, !kept)
				}
			}
			forked = false
		}
		prompts, lineage = append(prompts, prompt), append(lineage, prompt)
		if sid == "" {
			sessions := c.transcripts()
			if len(sessions) != 1 {
				t.Fatalf("transcripts after turn one: %v", sessions)
			}
			sid = strings.TrimSuffix(filepath.Base(sessions[0]), ".jsonl")
		}
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
		if !strings.Contains(log, "window "+id) {
			t.Errorf("log lacks the window of %s:\n%s", id, log)
		}
	}
	for _, mark := range rng.Perm(turns) {
		mark++
		// A rewind to before an edit of the user's is refused, and
		// changes nothing; --force takes it.
		args := []string{"rewind", "--mark", strconv.Itoa(mark), "--files"}
		if slices.ContainsFunc(userEdits, func(turn int) bool { return turn > mark }) {
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

// randomBashCall is one shell tool call over files (paths relative to the
// workspace): an edit, a rename, a delete, a copy, a new directory, a mode
// change, a command that fails half way, or one left in the background
// (then bg names the file it writes once the call has returned).
func randomBashCall(rng *rand.Rand, id string, turn int, files []string) (call standInCall, bg string) {
	cmd := fmt.Sprintf("mkdir -p gen && printf 'made by %s\\n' > gen/%s.txt", id, id)
	if len(files) > 0 {
		f := pick(rng, files)
		switch rng.IntN(12) {
		case 0:
			cmd = fmt.Sprintf("sed -i 's/1/%d/; s/x/y/' %s", turn, f)
		case 1:
			cmd = fmt.Sprintf("mv %s %s.moved", f, f)
		case 2:
			cmd = fmt.Sprintf("rm %s", f)
		case 3:
			cmd = fmt.Sprintf("cp %s %s.copy", f, f)
		case 4:
			cmd = fmt.Sprintf("chmod +x %s && printf '%s\\n' >> %s", f, id, f)
		case 5:
			cmd = fmt.Sprintf("printf 'half of %s\\n' >> %s; exit 3", id, f)
		case 6:
			cmd = fmt.Sprintf("mkdir -p d%d/e && mv %s d%d/e/", turn, f, turn)
		case 8:
			cmd = fmt.Sprintf("git add -A && %s -qm 'turn %d' && git checkout -q -- %s", gitCommit, turn, f)
		case 9:
			cmd = "git stash -q && git stash pop -q"
		case 10:
			cmd = fmt.Sprintf("git checkout -q -- %s", f)
		case 7:
			bg = fmt.Sprintf("bg-%s.txt", id)
			return standInCall{id, "Bash", map[string]any{"command": fmt.Sprintf("sleep 0.3; printf 'late %s\\n' > %s", id, bg),
				"description": "background", "run_in_background": true}}, bg
		}
	}
	return standInCall{id, "Bash", map[string]any{"command": cmd, "description": "step"}}, ""
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
