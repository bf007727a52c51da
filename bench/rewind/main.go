// Command rewind measures ckfs rewinds: a rewind of 1,000 changed files,
// mounted (through the daemon) and unmounted (on the plain directory), and
// the preview of a rewind over a 100k-record timeline. It drives the real
// ckfs binary and prints a Markdown table.
//
//	go run ./bench/rewind -ckfs PATH [-files 1000] [-records 100000] [-n 3]
package main

import (
	"flag"
	"fmt"
	"github.com/ckfs-dev/ckfs/bench/internal/benchkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

var (
	ckfsBin = flag.String("ckfs", "", "ckfs binary")
	nFiles  = flag.Int("files", 1000, "files changed by the rewound window")
	nRecs   = flag.Int("records", 100000, "records in the timeline of the preview row")
	runs    = flag.Int("n", 3, "runs; the median is reported")
	profile = flag.String("profile", "", "write a CPU profile of the preview command to this file")
)

func main() {
	flag.Parse()
	if *ckfsBin == "" {
		benchkit.Fatalf("need -ckfs")
	}
	work, err := os.MkdirTemp("", "ckfs-rewind-bench-")
	benchkit.Check(err)
	defer os.RemoveAll(work)
	var mounted, unmounted, preview, again []time.Duration
	for i := range *runs {
		m, u := rewindFiles(filepath.Join(work, fmt.Sprintf("files-%d", i)))
		mounted, unmounted = append(mounted, m), append(unmounted, u)
		p, a := previewLarge(filepath.Join(work, fmt.Sprintf("preview-%d", i)))
		preview, again = append(preview, p), append(again, a)
	}
	fmt.Printf("ckfs rewind benchmark — %s; median of %d runs, wall time of the ckfs command\n\n", benchkit.Machine(), *runs)
	fmt.Println("| operation | seconds |")
	fmt.Println("|---|---|")
	fmt.Printf("| rewind of %d changed files, mounted | %.3f |\n", *nFiles, benchkit.Median(mounted).Seconds())
	fmt.Printf("| rewind of %d changed files, unmounted | %.3f |\n", *nFiles, benchkit.Median(unmounted).Seconds())
	fmt.Printf("| preview over a %d-record timeline, its first read (writes the timeline cache) | %.3f |\n", *nRecs, benchkit.Median(preview).Seconds())
	fmt.Printf("| preview over a %d-record timeline, again (from the cache) | %.3f |\n", *nRecs, benchkit.Median(again).Seconds())
}

// rewindFiles changes every file of a workspace in one window, rewinds it
// mounted, then undoes that rewind unmounted; both restore nFiles files.
func rewindFiles(dir string) (mounted, unmounted time.Duration) {
	repo := filepath.Join(dir, "repo")
	benchkit.Check(os.MkdirAll(repo, 0o755))
	body := strings.Repeat("func f() int { return 42 } // some source text\n", 40)
	for i := range *nFiles {
		d := filepath.Join(repo, fmt.Sprintf("pkg%02d", i%50))
		benchkit.Check(os.MkdirAll(d, 0o755))
		benchkit.Check(os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.go", i)), []byte(body), 0o644))
	}
	env := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"))
	ckfs(env, "/", "mount", repo)
	benchkit.Unmounted(repo)
	ckfs(env, repo, "run", "--", "sh", "-c", `for f in pkg*/*.go; do echo "// edited" >> "$f"; done`)
	start := time.Now()
	ckfs(env, repo, "rewind", "--files", "--last", "1")
	mounted = time.Since(start)
	ckfs(env, "/", "unmount", repo)
	start = time.Now()
	ckfs(env, repo, "rewind", "--files", "--undo")
	unmounted = time.Since(start)
	return mounted, unmounted
}

// previewLarge writes a timeline of nRecs records (windows editing a few
// hundred files in turn) for a real workspace and times the preview of a
// rewind to its middle.
func previewLarge(dir string) (first, again time.Duration) {
	repo, home := filepath.Join(dir, "repo"), filepath.Join(dir, "home")
	benchkit.Check(os.MkdirAll(repo, 0o755))
	env := append(os.Environ(), "CKFS_HOME="+home)
	// Create the store the normal way, then append records directly.
	ckfs(env, "/", "mount", repo)
	ckfs(env, "/", "unmount", repo)
	stores, _ := filepath.Glob(filepath.Join(home, "repo-*"))
	store := stores[0]
	s, err := cas.Open(store, nil)
	benchkit.Check(err)
	w, _, err := index.OpenWriter(store, index.WriterOptions{NoSync: true})
	benchkit.Check(err)
	const paths = 500
	versions := map[string]int{}
	state := func(p string, v int) *index.State {
		b := []byte(fmt.Sprintf("%s version %d\n", p, v))
		h, _, err := s.PutDeferred(b)
		benchkit.Check(err)
		return &index.State{Hash: h, Size: int64(len(b)), Mode: 0o644, Type: index.TypeFile}
	}
	n := 0
	for win := 0; n < *nRecs; win++ {
		id := fmt.Sprintf("w%d", win)
		recs := []*index.Record{{Kind: index.KindOpen, Window: id, Tool: "Edit"}}
		for k := range 8 {
			p := fmt.Sprintf("src/f%03d.go", (win*8+k)%paths)
			v := versions[p]
			recs = append(recs, &index.Record{Kind: index.KindBefore, Window: id, Path: p, State: state(p, v)},
				&index.Record{Kind: index.KindAfter, Window: id, Path: p, State: state(p, v+1)})
			versions[p] = v + 1
		}
		recs = append(recs, &index.Record{Kind: index.KindClose, Window: id})
		benchkit.Check(w.Append(recs...))
		n += len(recs)
	}
	benchkit.Check(w.Close())
	benchkit.Check(s.Sync())
	benchkit.Check(os.MkdirAll(filepath.Join(repo, "src"), 0o755))
	for p, v := range versions {
		benchkit.Check(os.WriteFile(filepath.Join(repo, p), []byte(fmt.Sprintf("%s version %d\n", p, v)), 0o644))
	}
	if *profile != "" {
		env = append(env, "CKFS_CPUPROFILE="+*profile)
	}
	start := time.Now()
	ckfs(env, repo, "rewind", "--to", fmt.Sprint(n/2))
	first = time.Since(start)
	// The first command to read the timeline leaves its cache
	// (docs/format.md, section 5); every later one starts from it.
	start = time.Now()
	ckfs(env, repo, "rewind", "--to", fmt.Sprint(n/2))
	return first, time.Since(start)
}

func ckfs(env []string, dir string, args ...string) string {
	c := exec.Command(*ckfsBin, args...)
	c.Dir, c.Env = dir, env
	out, err := c.CombinedOutput()
	if err != nil {
		benchkit.Fatalf("ckfs %v: %v\n%s", args, err, out)
	}
	return string(out)
}
