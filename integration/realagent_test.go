package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/internal/testenv"
)

// The real agent CLIs, pinned: installed from npm into a cache outside the
// repository the first time a test needs them.
const (
	claudePackage   = "@anthropic-ai/claude-code"
	claudeVersion   = "2.1.332"
	codexPackage    = "@openai/codex"
	codexVersion    = "0.169.0"
	geminiPackage   = "@google/gemini-cli"
	geminiVersion   = "0.61.0"
	qwenPackage     = "@qwen-code/qwen-code"
	qwenVersion     = "0.24.4"
	opencodePackage = "opencode-ai"
	opencodeVersion = "1.18.33"
)

// cliRun is a real agent CLI started through ckfs agent NAME in the
// workspace, with a home directory of its own and the environment env.
type cliRun struct {
	w    *workspace
	name string
	home string
	env  []string
}

// agent runs `ckfs agent NAME ARGS` and returns its output.
func (c *cliRun) agent(args ...string) string {
	c.w.t.Helper()
	cmd := exec.Command(ckfsBin, append([]string{"agent", c.name}, args...)...)
	cmd.Dir = c.w.root
	// A temporary directory of the run's own: the CLIs leave theirs
	// behind (OpenCode's $TMPDIR/opencode).
	tmp := filepath.Join(c.home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		c.w.t.Fatal(err)
	}
	cmd.Env = append(append(c.w.env(), "HOME="+c.home, "TMPDIR="+tmp), c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &out, strings.NewReader("")
	if err := cmd.Start(); err != nil {
		c.w.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.w.t.Fatalf("ckfs agent %s %s: %v\n%s", c.name, strings.Join(args, " "), err, out.String())
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		c.w.t.Fatalf("ckfs agent %s: still running after 3 minutes\n%s", c.name, out.String())
	}
	return out.String()
}

// settings writes the CLI's user settings file, relative to its home.
func (c *cliRun) settings(rel, json string) {
	p := filepath.Join(c.home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		c.w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(json), 0o600); err != nil {
		c.w.t.Fatal(err)
	}
}

// agentBinary returns the path of an npm package's binary, installing the
// pinned version into the user's cache when it is not there yet. Without
// npm or the registry the test is skipped, unless CKFS_REQUIRE_AGENTS=1
// (CI), where that is a failure.
func agentBinary(t *testing.T, pkg, version, bin string) string {
	t.Helper()
	exe, err := installAgent(pkg, version, bin)
	if err != nil {
		if os.Getenv("CKFS_REQUIRE_AGENTS") == "1" {
			t.Fatalf("CKFS_REQUIRE_AGENTS=1 but %s %s cannot be installed: %v", pkg, version, err)
		}
		t.Skipf("%s %s is not available (%v): set CKFS_REQUIRE_AGENTS=1 to make this a failure", pkg, version, err)
	}
	return exe
}

// installs serializes installAgent: the sessions of one CLI run in
// parallel, and two npm installs into one directory would race.
var installs sync.Mutex

// installAgent installs the pinned version of an npm package into the
// user's cache, unless it is there, and returns its binary's path.
func installAgent(pkg, version, bin string) (string, error) {
	installs.Lock()
	defer installs.Unlock()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "ckfs-test", "npm", strings.ReplaceAll(pkg, "/", "+")+"@"+version)
	exe := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("npm is not installed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--prefix", dir, pkg+"@"+version)
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install: %v: %s", err, testenv.LastLines(string(out), 5))
	}
	if _, err := os.Stat(exe); err != nil {
		return "", errors.New("npm installed no " + bin)
	}
	return exe, nil
}

// keepTranscript copies the transcript a real CLI wrote to the file named
// by CKFS_KEEP_TRANSCRIPT, if set (the parser tests' fixtures come from
// there).
func keepTranscript(path string) {
	if keep := os.Getenv("CKFS_KEEP_TRANSCRIPT"); keep != "" {
		b, _ := os.ReadFile(path)
		os.WriteFile(keep, b, 0o644)
	}
}

// rewindBoth rewinds both sides to mark and checks the files are tree.
func rewindBoth(t *testing.T, w *workspace, mark int, tree string) (rewindJSON, string) {
	t.Helper()
	out := w.ckfs("rewind", "--mark", fmt.Sprint(mark), "--files", "--conversation", "--json")
	if got := workTree(t, w.root); got != tree {
		t.Errorf("mark %d: files\n%s\nwant\n%s", mark, got, tree)
	}
	var r rewindJSON
	json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &r)
	return r, out
}

// checkKeptTurns checks that what a resumed fork sent (sent) holds the
// prompts of the turns before mark, and none after.
func checkKeptTurns(t *testing.T, mark int, prompts []string, sent string) {
	t.Helper()
	for i, p := range prompts {
		if kept := i+1 < mark; kept != strings.Contains(sent, p) {
			t.Errorf("mark %d: the resumed fork %s turn %d", mark, map[bool]string{true: "lost", false: "still sent"}[kept], i+1)
		}
	}
}

// undoTo undoes the last files rewind and checks the files are final.
func undoTo(t *testing.T, w *workspace, mark int, final string) {
	t.Helper()
	w.ckfs("rewind", "--files", "--undo")
	if got := workTree(t, w.root); got != final {
		t.Fatalf("mark %d: undo did not bring the files back:\n%s", mark, got)
	}
}

// forkEachMark rewinds both sides to each of marks, resumes the fork with
// the real CLI (resume runs it with the child's id and a new prompt and
// returns what the model was sent), checks that exactly the kept turns and
// the new prompt were sent and that the CLI wrote the new turn to the
// fork's transcript, and undoes the file rewind.
func forkEachMark(t *testing.T, w *workspace, marks []int, trees map[int]string, prompts []string, final string,
	resume func(child, prompt string) string) {
	t.Helper()
	for _, mark := range marks {
		r, out := rewindBoth(t, w, mark, trees[mark])
		if r.Conversation == nil || !r.Conversation.Written || r.Conversation.Transcript == nil {
			t.Fatalf("no conversation fork at mark %d:\n%s", mark, out)
		}
		child := r.Conversation.Child
		next := fmt.Sprintf("resumed at mark %d", mark)
		sent := resume(child, next)
		checkKeptTurns(t, mark, prompts, sent)
		if !strings.Contains(sent, next) {
			t.Errorf("mark %d: the resumed fork did not send the new prompt", mark)
		}
		if b, _ := os.ReadFile(r.Conversation.Transcript.Path); !strings.Contains(string(b), next) {
			t.Errorf("mark %d: the CLI did not write the resumed turn to the fork's transcript", mark)
		}
		undoTo(t, w, mark, final)
	}
}

// firstSentSince returns what the first request after the first n that a
// stand-in kept sent as the conversation, failing when there is none.
func firstSentSince(t *testing.T, reqs []map[string]any, n int, conv func(map[string]any) string) string {
	t.Helper()
	if len(reqs) <= n {
		t.Fatal("the resumed fork sent nothing")
	}
	return conv(reqs[n])
}

// checkCaptured checks a real agent's session as captured: the tree holds
// each of wants, no window is left open, ckfs log matches each of res, and
// every write was matched to a call (none outside a window, none
// unfinished). It returns the log.
func checkCaptured(t *testing.T, w *workspace, final string, wants, res []string) string {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(final, want) {
			t.Fatalf("workspace at the end lacks %s:\n%s", want, final)
		}
	}
	if st := w.status(); st.Daemon == nil || len(st.Daemon.OpenWindows) != 0 {
		t.Fatalf("windows left open: %+v", st.Daemon)
	}
	out := w.ckfs("log")
	for _, re := range res {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("log does not match %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "outside any window") || strings.Contains(out, "unfinished") {
		t.Errorf("a write of the agent's was not matched to its call:\n%s", out)
	}
	return out
}

// checkBlame checks that ckfs blame credits line n of path (text) to a
// real agent's tool call: its window, tool ("": any), turn and prompt.
func checkBlame(t *testing.T, w *workspace, path string, n int, text, window, tool string, turn int, prompt string) {
	t.Helper()
	var lines []struct {
		N      int    `json:"line"`
		Text   string `json:"text"`
		Tool   string `json:"tool"`
		Turn   int    `json:"turn"`
		Prompt string `json:"prompt"`
		Origin struct {
			By, Window string
		} `json:"origin"`
	}
	out := w.ckfs("blame", "--json", path)
	if err := json.Unmarshal([]byte(out), &lines); err != nil || len(lines) < n {
		t.Fatalf("ckfs blame --json %s: %v\n%s", path, err, out)
	}
	l := lines[n-1]
	if l.Text != text || l.Origin.By != "window" || l.Origin.Window != window || (tool != "" && l.Tool != tool) || l.Turn != turn || l.Prompt != prompt {
		t.Errorf("blame of %s line %d: %+v; want %q from window %s (%s), turn %d %q", path, n, l, text, window, tool, turn, prompt)
	}
}

// checkView checks that the view of a mark's checkpoint holds exactly the
// tree the workspace had then.
func checkView(t *testing.T, w *workspace, mark int, tree string) {
	t.Helper()
	var entries []struct {
		Kind       string `json:"kind"`
		Mark       int    `json:"mark"`
		Checkpoint uint64 `json:"checkpoint"`
	}
	if err := json.Unmarshal([]byte(w.ckfs("log", "--json")), &entries); err != nil {
		t.Fatal(err)
	}
	seq := uint64(0)
	for _, e := range entries {
		if e.Kind == "mark" && e.Mark == mark {
			seq = e.Checkpoint
		}
	}
	dir := filepath.Join(t.TempDir(), "view")
	w.ckfs("view", fmt.Sprint(seq), dir)
	defer w.ckfs("view", "--close", dir)
	if got := workTree(t, dir); got != tree {
		t.Errorf("the view of mark %d (checkpoint %d):\n%s\nwant the tree then:\n%s", mark, seq, got, tree)
	}
}
