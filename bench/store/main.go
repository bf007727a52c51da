// Command store measures what ckfs's store costs and how fast it is checked:
//
//   - a realistic session — 1,000 agent-style edits of ~10 KB Go source
//     files across 50 files, one tool window per edit, through a real mount
//     — as ckfs store bytes vs the full file copies a per-edit backup store
//     (Claude Code's checkpoints) holds, vs a shadow git repository that
//     commits after every edit (as Cline and Gemini CLI checkpoint), side by
//     side in one run;
//
//   - ckfs verify throughput on a store of about 1 GiB, with a cold page
//     cache and a warm one.
//
//     go run ./bench/store -ckfs PATH [-edits 1000] [-files 50] [-verify-mib 1024]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/workspace"

	"github.com/ckfs-dev/ckfs/bench/internal/benchkit"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

var (
	ckfsBin   = flag.String("ckfs", "", "ckfs binary")
	nEdits    = flag.Int("edits", 1000, "edits in the session")
	nFiles    = flag.Int("files", 50, "files edited")
	verifyMiB = flag.Int("verify-mib", 1024, "size of the store ckfs verify reads, in MiB")
)

func main() {
	flag.Parse()
	if *ckfsBin == "" {
		benchkit.Fatalf("need -ckfs")
	}
	work, cleanup := benchkit.TempDir("ckfs-store-bench-")
	defer cleanup()
	fmt.Printf("ckfs store benchmark — %s\n\n", benchkit.Machine())
	session(filepath.Join(work, "session"))
	fmt.Println()
	verify(filepath.Join(work, "verify"))
}

// session plays the edits and prints the size table.
func session(dir string) {
	repo := filepath.Join(dir, "repo")
	benchkit.Check(os.MkdirAll(repo, 0o755))
	files := pickSources(*nFiles)
	var paths []string
	var baseBytes int64
	for i, src := range files {
		b, err := os.ReadFile(src)
		benchkit.Check(err)
		rel := fmt.Sprintf("pkg%02d/%s", i, filepath.Base(src))
		benchkit.Check(os.MkdirAll(filepath.Join(repo, filepath.Dir(rel)), 0o755))
		benchkit.Check(os.WriteFile(filepath.Join(repo, rel), b, 0o644))
		paths = append(paths, rel)
		baseBytes += int64(len(b))
	}
	cfg := filepath.Join(dir, "config.toml")
	benchkit.Check(os.WriteFile(cfg, []byte("[retention]\nauto_gc = false\n"), 0o644))
	env := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"), "CKFS_CONFIG="+cfg)
	shadow := filepath.Join(dir, "shadow.git")
	genv := append(os.Environ(), "GIT_DIR="+shadow, "GIT_WORK_TREE="+repo, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	benchkit.Run(genv, repo, "git", "init", "-q")
	benchkit.Run(genv, repo, "git", "add", "-A")
	benchkit.Run(genv, repo, "git", "commit", "-q", "-m", "base")
	shadowBase := workspace.DirBytes(shadow)

	benchkit.Run(env, "/", *ckfsBin, "mount", repo)
	benchkit.Unmounted(repo)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range *nEdits {
		rel := paths[rng.IntN(len(paths))]
		id := fmt.Sprintf("e%04d", i)
		benchkit.Run(env, repo, *ckfsBin, "window", "open", "--id", id, "--tool", "Edit")
		p := filepath.Join(repo, rel)
		b, err := os.ReadFile(p)
		benchkit.Check(err)
		benchkit.Check(os.WriteFile(p, edit(b, rng, i), 0o644))
		benchkit.Run(env, repo, *ckfsBin, "window", "close", "--id", id)
		benchkit.Run(genv, repo, "git", "add", "-A")
		benchkit.Run(genv, repo, "git", "commit", "-q", "-m", id)
	}
	duOut := benchkit.Run(env, repo, *ckfsBin, "du", "--json")
	benchkit.Run(env, "/", *ckfsBin, "unmount", repo)
	var du struct {
		Store    string `json:"store"`
		Stored   int64  `json:"stored_bytes"`
		Timeline int64  `json:"timeline_bytes"`
		Objects  int    `json:"objects"`
		FullCopy int64  `json:"full_copy_bytes"`
	}
	benchkit.Check(json.Unmarshal(duOut, &du))
	recs, _, err := index.Load(filepath.Join(du.Store, index.TimelineFile))
	benchkit.Check(err)
	var backups int64 // one full copy of the file before every edit
	for _, r := range recs {
		if r.Kind == index.KindBefore && r.State != nil {
			backups += r.Size
		}
	}
	ckfsBytes := du.Stored + du.Timeline
	shadowBytes := workspace.DirBytes(shadow) - shadowBase
	fmt.Printf("Store size after %d edits of %d Go source files (%.1f KB average, from the Go distribution), one window per edit\n\n",
		*nEdits, len(paths), float64(baseBytes)/float64(len(paths))/1000)
	fmt.Println("| store | bytes | vs full copies |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| full copy before every edit (per-edit backups) | %d | 1.00 |\n", backups)
	fmt.Printf("| shadow git, a commit after every edit (loose objects) | %d | %.2f |\n", shadowBytes, ratio(shadowBytes, backups))
	fmt.Printf("| ckfs: objects (%d) + timeline | %d | **%.2f** |\n", du.Objects, ckfsBytes, ratio(ckfsBytes, backups))
	fmt.Printf("| ckfs: objects only | %d | %.2f |\n", du.Stored, ratio(du.Stored, backups))
}

// edit changes a file as an agent's edit tool does: replace one line and
// insert a few new ones around a random spot.
func edit(b []byte, rng *rand.Rand, n int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	at := rng.IntN(len(lines))
	repl := [][]byte{[]byte(fmt.Sprintf("\t// edit %d: handle the case the caller missed\n", n))}
	for range rng.IntN(3) {
		repl = append(repl, []byte(fmt.Sprintf("\tif err != nil { return fmt.Errorf(\"step %d: %%w\", err) }\n", rng.IntN(1000))))
	}
	out := append([][]byte{}, lines[:at]...)
	out = append(out, repl...)
	out = append(out, lines[min(at+1, len(lines)):]...)
	return bytes.Join(out, nil)
}

// pickSources returns n Go source files of 8–12 KB from the Go distribution.
func pickSources(n int) []string {
	root := filepath.Join(benchkit.GoRoot(), "src")
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "testdata") {
			return nil
		}
		if i, err := d.Info(); err == nil && i.Size() >= 8000 && i.Size() <= 12000 {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	if len(out) < n {
		benchkit.Fatalf("only %d source files of 8-12 KB in %s", len(out), root)
	}
	step := len(out) / n
	var pick []string
	for i := range n {
		pick = append(pick, out[i*step])
	}
	return pick
}

// verify builds a store of about verifyMiB MiB (random content, so stored
// bytes equal content bytes) and times ckfs verify on it.
func verify(dir string) {
	repo := filepath.Join(dir, "repo")
	store := filepath.Join(dir, "store")
	benchkit.Check(os.MkdirAll(repo, 0o755))
	s, err := cas.Open(store, nil)
	benchkit.Check(err)
	meta := fmt.Sprintf(`{"version":1,"root":%q,"created":"2026-01-01T00:00:00Z"}`, repo)
	benchkit.Check(os.WriteFile(filepath.Join(store, "store.json"), []byte(meta+"\n"), 0o600))
	rng := rand.New(rand.NewPCG(1, 2))
	var total int64
	n := 0
	for total < int64(*verifyMiB)<<20 {
		size := 64<<10 + rng.IntN(4<<20)
		b := make([]byte, size)
		for i := 0; i < len(b); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8 && i+j < len(b); j++ {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		_, _, err := s.PutDeferred(b)
		benchkit.Check(err)
		total += int64(size)
		n++
	}
	benchkit.Check(s.Sync())
	env := append(os.Environ(), "CKFS_HOME="+filepath.Join(dir, "home"))
	stored := workspace.DirBytes(filepath.Join(store, "objects"))
	timeIt := func(cold bool) float64 {
		if cold {
			exec.Command("sync").Run()
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0); err != nil {
				return -1
			}
		}
		start := time.Now()
		benchkit.Run(env, repo, *ckfsBin, "verify", "--store", store)
		return float64(stored) / 1e6 / time.Since(start).Seconds()
	}
	coldRate, warmRate := timeIt(true), timeIt(false)
	fmt.Printf("ckfs verify on a %.2f GiB store (%d objects of 64 KiB–4 MiB)\n\n", float64(stored)/(1<<30), n)
	fmt.Println("| page cache | MB/s (stored bytes read, decoded and rehashed) |")
	fmt.Println("|---|---|")
	if coldRate > 0 {
		fmt.Printf("| cold (caches dropped) | %.0f |\n", coldRate)
	} else {
		fmt.Println("| cold | not measured: cannot drop caches (needs root) |")
	}
	fmt.Printf("| warm | %.0f |\n", warmRate)
}

func ratio(a, b int64) float64 { return float64(a) / float64(b) }
