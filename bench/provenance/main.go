// Command provenance measures ckfs blame, views and bisect side by side
// with what a user would do otherwise, in one run:
//
//   - ckfs blame of a file with -versions versions (one window each)
//     against git blame of the same history committed to git;
//   - opening a view of a checkpoint of Go's src tree, and grep -r and
//     ls -lR in it (warm) against the same in a native copy;
//   - a bisect over -windows windows of that tree with a test of
//     -test-seconds, against git bisect run over a shadow-git history of
//     the same changes: what each step costs besides the test.
//
// It drives the real ckfs binary and prints Markdown tables.
//
//	go run ./bench/provenance -ckfs PATH [-versions 1000] [-windows 64] [-n 5]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/bench/internal/benchkit"
)

var (
	ckfsBin  = flag.String("ckfs", "", "ckfs binary")
	versions = flag.Int("versions", 1000, "versions of the blamed file")
	windows  = flag.Int("windows", 64, "windows the bisect searches")
	testSecs = flag.Float64("test-seconds", 1, "how long the bisect's test takes")
	runs     = flag.Int("n", 5, "runs of each timed command; the median is reported")
	only     = flag.String("only", "blame,view,bisect", "the parts to run")
)

func main() {
	flag.Parse()
	if *ckfsBin == "" {
		benchkit.Fatalf("need -ckfs")
	}
	work, done := benchkit.TempDir("ckfs-provenance-bench-")
	defer done()
	fmt.Printf("ckfs provenance benchmark — %s; median of %d runs\n\n", benchkit.Machine(), *runs)
	if strings.Contains(*only, "blame") {
		blame(filepath.Join(work, "blame"))
	}
	if strings.Contains(*only, "view") || strings.Contains(*only, "bisect") {
		treeBenches(filepath.Join(work, "tree"))
	}
}

// timed runs a command n times in dir and returns the median wall time.
func timed(env []string, dir string, n int, name string, args ...string) time.Duration {
	var ts []time.Duration
	for range n {
		start := time.Now()
		benchkit.Run(env, dir, name, args...)
		ts = append(ts, time.Since(start))
	}
	return benchkit.Median(ts)
}

// blame builds the same 1,000-version history in ckfs and in git, then
// blames the file in both.
func blame(dir string) {
	repo, gitRepo := filepath.Join(dir, "repo"), filepath.Join(dir, "git")
	benchkit.Check(os.MkdirAll(repo, 0o755))
	benchkit.Check(os.MkdirAll(gitRepo, 0o755))
	var body strings.Builder
	for i := range 400 {
		fmt.Fprintf(&body, "\tline %d of the original file\n", i)
	}
	for _, d := range []string{repo, gitRepo} {
		benchkit.Check(os.WriteFile(filepath.Join(d, "f.go"), []byte(body.String()), 0o644))
	}
	env := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
	benchkit.Run(env, gitRepo, "sh", "-c", "git init -q && git add . && git commit -qm base")
	benchkit.Run(env, "/", *ckfsBin, "mount", repo)
	benchkit.Unmounted(repo)
	defer benchkit.Run(env, "/", *ckfsBin, "unmount", repo)
	script := func(pre, post string) string {
		return fmt.Sprintf(`i=1; while [ $i -le %d ]; do l=$(( (i * 37) %% 400 + 1 )); `, *versions) +
			pre + ` sed -i "${l}s/.*/\tline $l, version $i/" f.go ` + post + `; i=$((i+1)); done`
	}
	benchkit.Run(env, repo, "sh", "-c", script(*ckfsBin+" run --", ""))
	benchkit.Run(env, gitRepo, "sh", "-c", script("", "&& git commit -qam v$i"))
	c := timed(env, repo, *runs, *ckfsBin, "blame", "--json", "f.go")
	g := timed(env, gitRepo, *runs, "git", "blame", "f.go")
	fmt.Printf("### ckfs blame against git blame, a 400-line file with %d versions\n\n", *versions)
	fmt.Println("| command | seconds | ratio to git blame |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| git blame f.go | %.3f | 1.00× |\n", g.Seconds())
	fmt.Printf("| ckfs blame --json f.go | %.3f | %.2f× |\n\n", c.Seconds(), c.Seconds()/g.Seconds())
}

// treeBenches puts Go's src tree in a mounted workspace and a shadow git,
// makes the same windows' changes in both, then measures a view and a
// bisect.
func treeBenches(dir string) {
	repo, gitRepo, native := filepath.Join(dir, "repo"), filepath.Join(dir, "git"), filepath.Join(dir, "native")
	env := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
	for _, d := range []string{repo, gitRepo, native} {
		benchkit.Check(os.MkdirAll(d, 0o755))
		benchkit.Run(env, d, "sh", "-c", "cp -a "+filepath.Join(benchkit.GoRoot(), "src")+" .")
	}
	files := strings.Fields(string(benchkit.Run(env, native, "sh", "-c", fmt.Sprintf("find src -name '*.go' | sort | head -%d", *windows))))
	benchkit.Run(env, gitRepo, "sh", "-c", "git init -q && git add -A && git commit -qm base")
	benchkit.Run(env, "/", *ckfsBin, "mount", repo)
	benchkit.Unmounted(repo)
	defer benchkit.Run(env, "/", *ckfsBin, "unmount", repo)
	bad := len(files) * 5 / 8
	for i, f := range files {
		line := fmt.Sprintf("// window %d", i)
		if i == bad {
			line = "// BROKEN"
		}
		edit := fmt.Sprintf("echo '%s' >> %s", line, f)
		benchkit.Run(env, repo, *ckfsBin, "run", "--", "sh", "-c", edit)
		benchkit.Run(env, gitRepo, "sh", "-c", edit+" && git commit -qam w"+fmt.Sprint(i))
	}
	if strings.Contains(*only, "view") {
		view(env, repo, native)
	}
	if strings.Contains(*only, "bisect") {
		bisect(env, repo, gitRepo)
	}
}

// view opens a view of the checkpoint before the windows, and greps and
// lists it.
func view(env []string, repo, native string) {
	at := filepath.Join(filepath.Dir(repo), "at")
	start := time.Now()
	benchkit.Run(env, repo, *ckfsBin, "view", "1", at)
	open := time.Since(start)
	defer benchkit.Run(env, repo, *ckfsBin, "view", "--close", at)
	fmt.Printf("### A view of a %s-file checkpoint of Go's src\n\n", strings.TrimSpace(string(benchkit.Run(env, native, "sh", "-c", "find src -type f | wc -l"))))
	fmt.Println("| | seconds | ratio to native |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| ckfs view 1 DIR (build the tree, mount) | %.3f | |\n", open.Seconds())
	for _, c := range []struct{ name, cmd string }{
		{"grep -r", "grep -r -l ZZZZnotthere . || true"},
		{"ls -lR", "ls -lR . > /dev/null"},
	} {
		benchkit.Run(env, filepath.Join(at, "src"), "sh", "-c", c.cmd) // cold
		v := timed(env, filepath.Join(at, "src"), *runs, "sh", "-c", c.cmd)
		benchkit.Run(env, filepath.Join(native, "src"), "sh", "-c", c.cmd)
		nat := timed(env, filepath.Join(native, "src"), *runs, "sh", "-c", c.cmd)
		fmt.Printf("| %s, native copy, warm | %.3f | 1.00× |\n", c.name, nat.Seconds())
		fmt.Printf("| %s in the view, warm | %.3f | %.2f× |\n", c.name, v.Seconds(), v.Seconds()/nat.Seconds())
	}
	fmt.Println()
}

// bisect finds the window that wrote "// BROKEN" with ckfs bisect and
// with git bisect run, the test taking testSecs either way.
func bisect(env []string, repo, gitRepo string) {
	test := fmt.Sprintf("sleep %g; ! grep -rq '^// BROKEN' src", *testSecs)
	start := time.Now()
	out := benchkit.Run(env, repo, *ckfsBin, "bisect", "--json", "--test", test)
	ckfsTotal := time.Since(start)
	var res struct {
		FirstBad string `json:"first_bad"`
		Steps    []struct {
			Prepare int64 `json:"prepare_ns"`
			Took    int64 `json:"took_ns"`
			Written int   `json:"written"`
		} `json:"steps"`
	}
	benchkit.Check(json.Unmarshal(out, &res))
	var prep []time.Duration
	for _, s := range res.Steps[1:] {
		prep = append(prep, time.Duration(s.Prepare))
	}
	first := time.Duration(res.Steps[0].Prepare)
	start = time.Now()
	gitOut := string(benchkit.Run(env, gitRepo, "sh", "-c", "git bisect start HEAD $(git rev-list --max-parents=0 HEAD) >/dev/null && git bisect run sh -c \""+test+"\"; git bisect reset >/dev/null 2>&1"))
	gitTotal := time.Since(start)
	gitN := strings.Count(gitOut, "running")
	n := len(res.Steps)
	fmt.Printf("### Bisect over %d windows of Go's src, a %g s test\n\n", *windows, *testSecs)
	fmt.Println("| | steps | total seconds | besides the tests, a step |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| ckfs bisect (both ends tested) | %d | %.2f | %.3f s median (%.1f%% of the test); the first, a full tree: %.2f s |\n",
		n, ckfsTotal.Seconds(), benchkit.Median(prep).Seconds(), 100*benchkit.Median(prep).Seconds() / *testSecs, first.Seconds())
	fmt.Printf("| git bisect run on a shadow git | %d | %.2f | %.3f s |\n\n", gitN, gitTotal.Seconds(), (gitTotal.Seconds()-float64(gitN)**testSecs)/float64(gitN))
	fmt.Printf("ckfs bisect named %s\n\n", res.FirstBad)
}
