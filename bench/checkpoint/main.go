// Command checkpoint measures what one checkpoint costs as the repository
// grows: a tool call that edits one file, checkpointed by ckfs (window
// open, the edit through the mount, window close, every record durable),
// by a shadow git repository as Cline and Gemini CLI take it (git add -A and
// a commit into a separate git dir over the same work tree), and by a
// Codex-style ghost commit (a temporary index, git add -A, write-tree,
// commit-tree). All three run side by side in one invocation, on
// repositories of generated source files of 1k, 10k and 100k files. It also
// measures the daemon's peak RSS after 10,000 windows.
//
//	go run ./bench/checkpoint -ckfs PATH [-sizes 1000,10000,100000] [-n 5] [-windows 10000]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/ckfs-dev/ckfs/bench/internal/benchkit"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	ckfsBin  = flag.String("ckfs", "", "ckfs binary")
	hookBin  = flag.String("hook", "", "ckfs-hook binary (default: beside -ckfs, if there)")
	sizesF   = flag.String("sizes", "1000,10000,100000", "repository sizes, in files")
	runs     = flag.Int("n", 5, "checkpoints per cell; the median is reported")
	windows  = flag.Int("windows", 10000, "windows for the RSS row (0 to skip)")
	hookBase = flag.String("hook-base", "", "another ckfs-hook binary: adds the session-growth table, this hook against that one side by side")
)

func main() {
	flag.Parse()
	if *ckfsBin == "" {
		benchkit.Fatalf("need -ckfs")
	}
	if *hookBin == "" {
		if p := filepath.Join(filepath.Dir(*ckfsBin), "ckfs-hook"); benchkit.Exists(p) {
			*hookBin = p
		}
	}
	work, cleanup := benchkit.TempDir("ckfs-checkpoint-bench-")
	defer cleanup()
	gitv, _ := exec.Command("git", "--version").Output()
	fmt.Printf("Checkpoint cost — %s, %s; median of %d checkpoints, seconds\n\n", benchkit.Machine(), strings.TrimSpace(string(gitv)), *runs)
	fmt.Printf("Agent hooks run %s.\n\n", strings.Join(hookArgv(), " "))
	fmt.Println("| files | ckfs, agent hooks (2 processes) | ckfs, control socket | shadow git (add -A + commit) | ghost commit (temp index) | shadow git / ckfs hooks | shadow git / ckfs socket | ghost / ckfs hooks |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, s := range strings.Split(*sizesF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		benchkit.Check(err)
		c, k, g, h := measure(filepath.Join(work, fmt.Sprint(n)), n)
		fmt.Printf("| %d | %.4f | %.4f | %.4f | %.4f | %.1f× | %.1f× | %.1f× |\n", n, c.Seconds(), k.Seconds(), g.Seconds(), h.Seconds(),
			g.Seconds()/c.Seconds(), g.Seconds()/k.Seconds(), h.Seconds()/c.Seconds())
	}
	fmt.Println()
	fmt.Println("One hook process, warm (no sync between runs), median of", 4*(*runs), "each, milliseconds; the same binary's --help is its start and package initialisation alone:")
	fmt.Println()
	fmt.Println("| files | PreToolUse, ckfs-hook | PostToolUse, ckfs-hook | PreToolUse, ckfs hook | PostToolUse, ckfs hook | ckfs --help | /bin/true |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range hookRows {
		fmt.Println(r)
	}
	if *hookBase != "" && *hookBin != "" {
		fmt.Println()
		sessionGrowth(filepath.Join(work, "session"))
	}
	if *windows > 0 {
		fmt.Println()
		rssAfterWindows(filepath.Join(work, "rss"), *windows)
	}
}

// generate writes n source files of 0.5–4 KB, 100 to a directory.
func generate(root string, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	words := []string{"func", "return", "if", "err", "nil", "for", "range", "ctx", "value", "index", "store", "record", "path", "window", "close", "open", "bytes", "strings"}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("pkg%04d", i/100))
		if i%100 == 0 {
			benchkit.Check(os.MkdirAll(dir, 0o755))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg%04d\n\n", i/100)
		size := 500 + rng.IntN(3500)
		for b.Len() < size {
			fmt.Fprintf(&b, "\t%s %s(%s, %d) // %s\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(1000), words[rng.IntN(len(words))])
		}
		benchkit.Check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.go", i)), []byte(b.String()), 0o644))
	}
}

// measure returns the median checkpoint cost of each method on a
// repository of n files.
func measure(dir string, n int) (ckfsT, sockT, shadowT, ghostT time.Duration) {
	// Three identical trees, so no method warms another's caches.
	trees := map[string]string{}
	for _, k := range []string{"ckfs", "shadow", "ghost"} {
		trees[k] = filepath.Join(dir, k)
		generate(trees[k], n)
	}
	genv := append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		// No background gc: it would run into the next timed cell, and
		// outlive the benchmark's cleanup of its repository.
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0")
	// Shadow git: a separate git dir over the work tree, first commit untimed.
	shadowEnv := append(slices.Clip(genv), "GIT_DIR="+filepath.Join(dir, "shadow.git"), "GIT_WORK_TREE="+trees["shadow"])
	benchkit.Run(shadowEnv, trees["shadow"], "git", "init", "-q")
	benchkit.Run(shadowEnv, trees["shadow"], "git", "add", "-A")
	benchkit.Run(shadowEnv, trees["shadow"], "git", "commit", "-q", "-m", "base")
	// Ghost commits: the repository's own git, a temporary index per checkpoint.
	benchkit.Run(genv, trees["ghost"], "git", "init", "-q")
	benchkit.Run(genv, trees["ghost"], "git", "add", "-A")
	benchkit.Run(genv, trees["ghost"], "git", "commit", "-q", "-m", "base")
	// ckfs: mounted in place.
	cenv := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"), "CKFS_CONFIG="+filepath.Join(dir, "none.toml"))
	benchkit.Run(cenv, "/", *ckfsBin, "mount", trees["ckfs"])
	benchkit.Unmounted(trees["ckfs"])
	defer benchkit.Run(cenv, "/", *ckfsBin, "unmount", trees["ckfs"])

	edit := func(root string, i int) {
		p := filepath.Join(root, fmt.Sprintf("pkg%04d", (i*37%n)/100), fmt.Sprintf("f%05d.go", i*37%n))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		benchkit.Check(err)
		fmt.Fprintf(f, "// edit %d\n", i)
		benchkit.Check(f.Close())
	}
	var st struct {
		Store string `json:"store"`
	}
	benchkit.Check(json.Unmarshal(benchkit.Run(cenv, trees["ckfs"], *ckfsBin, "status", "--json"), &st))
	ctl := dialControl(st.Store)
	defer ctl.close()
	var cs, ks, ss, gs []time.Duration
	for i := range *runs {
		// Each method starts from a clean page cache: no method pays for
		// another's writes.
		syscall.Sync()
		start0 := time.Now()
		ctl.req(map[string]string{"op": "open", "id": fmt.Sprintf("s%d", i), "tool": "Edit"})
		edit(trees["ckfs"], i+1000)
		ctl.req(map[string]string{"op": "close", "id": fmt.Sprintf("s%d", i)})
		ks = append(ks, time.Since(start0))

		syscall.Sync()
		start := time.Now()
		hook(cenv, trees["ckfs"], "PreToolUse", i)
		edit(trees["ckfs"], i)
		hook(cenv, trees["ckfs"], "PostToolUse", i)
		cs = append(cs, time.Since(start))

		syscall.Sync()
		start = time.Now()
		edit(trees["shadow"], i)
		benchkit.Run(shadowEnv, trees["shadow"], "git", "add", "-A")
		benchkit.Run(shadowEnv, trees["shadow"], "git", "commit", "-q", "--no-verify", "-m", fmt.Sprint("checkpoint ", i))
		ss = append(ss, time.Since(start))

		syscall.Sync()
		start = time.Now()
		edit(trees["ghost"], i)
		idx := filepath.Join(dir, "ghost.index")
		copyFile(filepath.Join(trees["ghost"], ".git", "index"), idx)
		ienv := append(slices.Clip(genv), "GIT_INDEX_FILE="+idx)
		benchkit.Run(ienv, trees["ghost"], "git", "add", "-A")
		tree := strings.TrimSpace(string(benchkit.Run(ienv, trees["ghost"], "git", "write-tree")))
		benchkit.Run(genv, trees["ghost"], "git", "commit-tree", tree, "-p", "HEAD", "-m", fmt.Sprint("ghost ", i))
		os.Remove(idx)
		gs = append(gs, time.Since(start))
	}
	hookRows = append(hookRows, hookCost(cenv, trees["ckfs"], n))
	return benchkit.Median(cs), benchkit.Median(ks), benchkit.Median(ss), benchkit.Median(gs)
}

// hookRows are the per-size rows of the one-hook table.
var hookRows []string

// hookCost times single hook processes against the same binary doing
// nothing and the cheapest process start, interleaved so that drift on a
// noisy machine hits every column alike.
func hookCost(env []string, tree string, n int) string {
	var pre, post, fpre, fpost, help, truth []time.Duration
	// Writeback of the generated trees would land in the timed fsyncs.
	syscall.Sync()
	timed := func(acc *[]time.Duration, f func()) {
		start := time.Now()
		f()
		*acc = append(*acc, time.Since(start))
	}
	for i := range 4 * *runs {
		if *hookBin != "" {
			timed(&pre, func() { hookWith([]string{*hookBin, "claude"}, env, tree, "PreToolUse", 100000+i) })
			timed(&post, func() { hookWith([]string{*hookBin, "claude"}, env, tree, "PostToolUse", 100000+i) })
		}
		timed(&fpre, func() { hookWith([]string{*ckfsBin, "hook", "claude"}, env, tree, "PreToolUse", 200000+i) })
		timed(&fpost, func() { hookWith([]string{*ckfsBin, "hook", "claude"}, env, tree, "PostToolUse", 200000+i) })
		timed(&help, func() { benchkit.Run(env, tree, *ckfsBin, "--help") })
		timed(&truth, func() { benchkit.Run(env, tree, "true") })
	}
	ms := func(d []time.Duration) string {
		if len(d) == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", float64(benchkit.Median(d).Microseconds())/1000)
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s | %s | %s |", n, ms(pre), ms(post), ms(fpre), ms(fpost), ms(help), ms(truth))
}

// hookArgv is the hook command the agents run: ckfs-hook when there is
// one, as ckfs agent installs it.
func hookArgv() []string {
	if *hookBin != "" {
		return []string{*hookBin, "claude"}
	}
	return []string{*ckfsBin, "hook", "claude"}
}

// hook runs the agents' hook command with one event, as Claude Code does
// around every tool call: the process start, the window boundary and the
// session log append are all in it.
func hook(env []string, dir, event string, i int) { hookWith(hookArgv(), env, dir, event, i) }

func hookWith(argv []string, env []string, dir, event string, i int) {
	hookInput(argv, env, dir, event, fmt.Sprint(i), `{"file_path":"x"}`)
}

func hookInput(argv []string, env []string, dir, event, id, input string) {
	in := fmt.Sprintf(`{"hook_event_name":%q,"session_id":"5b0e7a3c-2f4d-4c6b-9a1e-8d7f6c5b4a39","cwd":%q,"tool_name":"Edit","tool_use_id":"toolu_%s","tool_input":%s}`, event, dir, id, input)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir, c.Env, c.Stdin = dir, env, strings.NewReader(in)
	if out, err := c.CombinedOutput(); err != nil || len(out) > 0 {
		benchkit.Fatalf("ckfs hook %s: %v %s", event, err, out)
	}
}

// control is a connection to a daemon's control socket.
type control struct {
	conn net.Conn
	rd   *bufio.Reader
}

func dialControl(store string) *control {
	conn, err := net.Dial("unix", filepath.Join(store, "control.sock"))
	benchkit.Check(err)
	return &control{conn: conn, rd: bufio.NewReader(conn)}
}

func (c *control) req(v map[string]string) {
	b, _ := json.Marshal(v)
	c.conn.Write(append(b, '\n'))
	line, err := c.rd.ReadString('\n')
	benchkit.Check(err)
	if !strings.Contains(line, `"ok":true`) {
		benchkit.Fatalf("control: %s", line)
	}
}

func (c *control) close() { c.conn.Close() }

// rssAfterWindows opens and closes many windows, each with an edit, through
// the control socket, and reports the daemon's peak RSS.
func rssAfterWindows(dir string, n int) {
	repo, env, unmount := mountGenerated(dir, 1000)
	defer unmount()
	var st struct {
		Store  string `json:"store"`
		Daemon struct {
			PID int `json:"pid"`
		} `json:"daemon"`
	}
	benchkit.Check(json.Unmarshal(benchkit.Run(env, repo, *ckfsBin, "status", "--json"), &st))
	ctl := dialControl(st.Store)
	req := ctl.req
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("w%d", i)
		req(map[string]string{"op": "open", "id": id, "tool": "Edit"})
		p := filepath.Join(repo, fmt.Sprintf("pkg%04d", (i%1000)/100), fmt.Sprintf("f%05d.go", i%1000))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		benchkit.Check(err)
		fmt.Fprintf(f, "// %d\n", i)
		f.Close()
		req(map[string]string{"op": "close", "id": id})
	}
	ctl.close()
	el := time.Since(start)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", st.Daemon.PID))
	benchkit.Check(err)
	hwm := ""
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	fmt.Printf("Daemon peak RSS after %d windows, each editing one file of a 1000-file repository: %s (%.2f ms per window over the control socket)\n", n, hwm, float64(el.Microseconds())/1000/float64(n))
}

func copyFile(from, to string) {
	b, err := os.ReadFile(from)
	benchkit.Check(err)
	benchkit.Check(os.WriteFile(to, b, 0o644))
}

// sessionGrowth times a tool call's two hooks (PreToolUse, the edit,
// PostToolUse) as the agent's session log grows, for this ckfs-hook and
// -hook-base side by side, interleaved, with /bin/true for the machine's
// process start: a hook's cost must not grow with the session.
func sessionGrowth(dir string) {
	tree, env, unmount := mountGenerated(dir, 100)
	defer unmount()
	fmt.Println("A tool call's two hooks (PreToolUse, a one-line edit, PostToolUse) as the session log grows, this ckfs-hook against", *hookBase, "interleaved; median of", 4*(*runs), "calls each, milliseconds:")
	fmt.Println()
	fmt.Println("| session log | this ckfs-hook | base ckfs-hook | base / this | /bin/true |")
	fmt.Println("|---|---|---|---|---|")
	// Each filler call logs its 200 KB input once, in its tool_call event.
	filler := `{"file_path":"x","content":"` + strings.Repeat("y", 200<<10) + `"}`
	logged, id := 0, 0
	for _, mb := range []int{0, 1, 8} {
		for ; logged < mb<<20; logged += len(filler) {
			id++
			hookInput([]string{*hookBin, "claude"}, env, tree, "PreToolUse", fmt.Sprint("fill", id), filler)
			hookInput([]string{*hookBin, "claude"}, env, tree, "PostToolUse", fmt.Sprint("fill", id), filler)
		}
		var this, base, truth []time.Duration
		call := func(bin string, acc *[]time.Duration) {
			id++
			start := time.Now()
			hookWith([]string{bin, "claude"}, env, tree, "PreToolUse", 300000+id)
			p := filepath.Join(tree, "pkg0000", fmt.Sprintf("f%05d.go", id%100))
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			benchkit.Check(err)
			fmt.Fprintf(f, "// edit %d\n", id)
			benchkit.Check(f.Close())
			hookWith([]string{bin, "claude"}, env, tree, "PostToolUse", 300000+id)
			*acc = append(*acc, time.Since(start))
		}
		for i := range 4 * *runs {
			if i%2 == 0 {
				call(*hookBin, &this)
				call(*hookBase, &base)
			} else {
				call(*hookBase, &base)
				call(*hookBin, &this)
			}
			start := time.Now()
			benchkit.Run(env, tree, "true")
			truth = append(truth, time.Since(start))
		}
		ms := func(d []time.Duration) float64 { return float64(benchkit.Median(d).Microseconds()) / 1000 }
		fmt.Printf("| %d MB | %.2f | %.2f | %.2f× | %.2f |\n", mb, ms(this), ms(base), ms(base)/ms(this), ms(truth))
	}
}

// mountGenerated generates a repository of n files under dir and mounts it
// in place with a store of its own; it returns the repository, the
// environment that reaches that store, and the unmount.
func mountGenerated(dir string, n int) (string, []string, func()) {
	repo := filepath.Join(dir, "repo")
	generate(repo, n)
	env := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"), "CKFS_CONFIG="+filepath.Join(dir, "none.toml"))
	benchkit.Run(env, "/", *ckfsBin, "mount", repo)
	benchkit.Unmounted(repo)
	return repo, env, func() { benchkit.Run(env, "/", *ckfsBin, "unmount", repo) }
}
