// Command passthrough measures ckfs's passthrough overhead side by side in
// one run: a native directory, a plain go-fuse loopback, ckfs mounted in
// place with no window open, and ckfs inside one window. It prints a
// Markdown table of median seconds and ratios to native.
//
//	go run ./bench/passthrough -ckfs PATH -loopback PATH [-n 3]
//
// bench/run builds the binaries and calls it.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/bench/internal/benchkit"
)

var (
	ckfsBin      = flag.String("ckfs", "", "ckfs binary")
	loopbackBin  = flag.String("loopback", "", "plain go-fuse loopback binary (bench/loopback)")
	runs         = flag.Int("n", 3, "runs per cell; the median is reported")
	bigMiB       = flag.Int("big", 1024, "MiB written and read by the sequential rows")
	only         = flag.String("only", "", "comma-separated workloads to run (default all)")
	memFiles     = flag.Int("memfiles", 100000, "files in the tree walked for the daemon RSS row (0 to skip)")
	columns      = flag.String("columns", "", "comma-separated columns to run (default all; native always runs)")
	maxRatio     = flag.Float64("max-ratio", 0, "fail if a ckfs column takes more than this many times the go-fuse loopback column on any row (0: never); CI's guard against a large regression")
	loopbackArgs = flag.String("loopback-variant", "", "flags for bench/loopback (e.g. -proc-fd, -long-timeouts): adds a column, plain loopback run with them, to measure what one serving choice costs")
	maxNative    = flag.String("max-native", "", "ROW=R: fail if a ckfs column takes more than R times native on the rows whose name contains ROW (CI's guard on warm reads)")
	maxRSS       = flag.Int("max-rss-kb", 0, "fail if the daemon's peak RSS after the -memfiles walk is over this many KiB (0: never); CI's guard against a large memory regression")
	cPassthrough = flag.String("c-passthrough", "", "libfuse's passthrough_ll binary (bench/cpassthrough builds it from Debian's libfuse3-dev examples): adds its column, run with -o cache=always, the fastest of its cache modes")
	ioPassthru   = flag.Bool("ckfs-io-passthrough", false, "add a column: ckfs mounted with --io passthrough (a request per open, kernel passthrough), no window")
	tree         = flag.String("tree", "", "a tarball (tar, or tar.gz) of the tree the rows work on, holding src/ at its top (default: Go's src, from the go command's GOROOT); bench/device carries one to a machine without Go")
	baseBin      = flag.String("ckfs-base", "", "another ckfs binary, run as two more columns, \"ckfs base, no window\" and \"ckfs base, in a window\" (a before/after comparison)")
)

// config is one column: where the workload runs and what wraps it.
type config struct {
	name  string
	setup func(work string) (dir string, stop func()) // a fresh empty directory to work in
	wrap  func(dir string, run func())                // around each timed run
}

type workload struct {
	name    string
	prepare func(dir string) // untimed
	run     func(dir string) // timed
}

// seededRow and seededSed name the workloads whose directory holds the Go source tree
// before it is mounted (untarred, untimed), so that ckfs meets it as files
// it never captured.
const (
	seededRow = "rm -rf of a tree from before the mount"
	seededSed = "sed -i over its cmd/ .go files (before the mount)"
)

// seedTarball, while set, is untarred into every fresh directory that a
// column serves (not into a loopback's mountpoint) before it is mounted.
var seedTarball string

func main() {
	flag.Parse()
	if *ckfsBin == "" || *loopbackBin == "" {
		benchkit.Fatalf("%v", "need -ckfs and -loopback")
	}
	work, err := os.MkdirTemp("", "ckfs-bench-")
	benchkit.Check(err)
	defer os.RemoveAll(work)
	benchkit.OnFail(func() { os.RemoveAll(work) }) // the last cleanup: after every unmount
	tarball := *tree
	if tarball == "" {
		tarball = filepath.Join(work, "src.tar")
		sh("tar cf " + tarball + " -C " + benchkit.GoRoot() + " src")
	}
	files := strings.Count(sh("tar tf "+tarball), "\n")
	configs := columnsFromFlags()
	modSrc := filepath.Join(work, "module")
	workloads := benchkit.Select(rows(tarball, files, modSrc), *only, func(w workload) string { return w.name })
	if slices.ContainsFunc(workloads, func(w workload) bool { return strings.HasPrefix(w.name, "go ") }) {
		// The build rows build this module: a copy of its tracked files.
		here, _ := filepath.Abs(".")
		benchkit.Check(os.Mkdir(modSrc, 0o755))
		sh(fmt.Sprintf("cd %s && git ls-files -z | xargs -0 cp --parents -t %s", here, modSrc))
	}
	res := measure(work, tarball, configs, workloads)
	printTable(configs, workloads, res)
	if *memFiles > 0 {
		fmt.Println()
		kb, line := memoryRow(work, *memFiles)
		fmt.Println(line)
		if *maxRSS > 0 && kb > *maxRSS {
			benchkit.Fatalf("the daemon's peak RSS after walking %d files is %d kB, over %d kB", *memFiles, kb, *maxRSS)
		}
	}
	if *maxRatio > 0 {
		guard(configs, workloads, res)
	}
	if *maxNative != "" {
		guardNative(configs, workloads, res)
	}
}

// columnsFromFlags are the file systems compared, native first: every
// ratio is to it.
func columnsFromFlags() []config {
	configs := []config{
		{name: "native", setup: nativeDir, wrap: plain},
		{name: "go-fuse loopback", setup: loopbackDir, wrap: plain},
		{name: "ckfs, no window", setup: ckfsDir, wrap: plain},
		{name: "ckfs, in a window", setup: ckfsDir, wrap: inWindow},
	}
	if *cPassthrough != "" {
		configs = append(configs, config{name: "libfuse passthrough_ll (C)", setup: cPassthroughDir, wrap: plain})
	}
	if *ioPassthru {
		configs = append(configs, config{name: "ckfs --io passthrough, no window", setup: func(work string) (string, func()) {
			return ckfsDirWith(*ckfsBin, work, "--io", "passthrough")
		}, wrap: plain})
	}
	if *loopbackArgs != "" {
		configs = append(configs, config{name: "loopback " + *loopbackArgs, setup: func(work string) (string, func()) {
			return loopbackDirWith(work, strings.Fields(*loopbackArgs)...)
		}, wrap: plain})
	}
	if *baseBin != "" {
		base := func(work string) (string, func()) { return ckfsDirWith(*baseBin, work) }
		configs = append(configs, config{name: "ckfs base, no window", setup: base, wrap: plain},
			config{name: "ckfs base, in a window", setup: base, wrap: inWindowWith(*baseBin)})
	}
	// Native always runs: every ratio is to it.
	return append(configs[:1:1], benchkit.Select(configs[1:], *columns, func(c config) string { return c.name })...)
}

// rows are the workloads, each with its preparation (not timed) and its
// timed run, given the directory it works in.
func rows(tarball string, files int, modSrc string) []workload {
	workloads := []workload{
		{fmt.Sprintf("untar Go src (%d files)", files), nil, func(d string) { sh("tar xf " + tarball + " -C " + d) }},
		{"grep -r over that tree", func(d string) { sh("tar xf " + tarball + " -C " + d) }, func(d string) { shOK("grep -r -c zzqqxx " + d + "/src >/dev/null") }},
		{"grep -r again (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			shOK("grep -r -c zzqqxx " + d + "/src >/dev/null")
		}, func(d string) { shOK("grep -r -c zzqqxx " + d + "/src >/dev/null") }},
		// The pass above follows one that read every file from the
		// daemon: the kernel takes each of those READs as an access and
		// asks for the file's attributes again at its next stat (one
		// GETATTR a file, on every FUSE file system). From the third pass
		// on, nothing is asked.
		{"grep -r a third time (steady)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			shOK("grep -r -c zzqqxx " + d + "/src >/dev/null")
			shOK("grep -r -c zzqqxx " + d + "/src >/dev/null")
		}, func(d string) { shOK("grep -r -c zzqqxx " + d + "/src >/dev/null") }},
		{"cat every file of that tree (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			sh("cd " + d + " && find src -type f -print0 | xargs -0 cat > /dev/null")
		}, func(d string) { sh("cd " + d + " && find src -type f -print0 | xargs -0 cat > /dev/null") }},
		{"ls -lR over that tree (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			sh("ls -lR " + d + "/src > /dev/null")
		}, func(d string) { sh("ls -lR " + d + "/src > /dev/null") }},
		{"find -name over that tree (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			sh("find " + d + "/src -name '*.go' | wc -l")
		}, func(d string) { sh("find " + d + "/src -name '*_test.go' | wc -l") }},
		// The pass above follows the one that listed every directory
		// from the daemon: as after a READ, the kernel takes each READDIR
		// as an access and asks for the directory's attributes again at
		// its next stat (one GETATTR a directory). The third pass asks
		// nothing.
		{"find -name a third time (steady)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			sh("find " + d + "/src -name '*.go' | wc -l")
			sh("find " + d + "/src -name '*.s' | wc -l")
		}, func(d string) { sh("find " + d + "/src -name '*_test.go' | wc -l") }},
		{"git status in that tree (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			sh("cd " + d + " && git init -q && git add -A && git -c gc.auto=0 -c user.email=b@b -c user.name=b commit -qm x && git status --porcelain | wc -l")
		}, func(d string) { sh("cd " + d + " && git status --porcelain | wc -l") }},
		{"git diff in that tree, 20 files changed (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			sh("cd " + d + " && git init -q && git add -A && git -c gc.auto=0 -c user.email=b@b -c user.name=b commit -qm x")
			sh("cd " + d + " && for f in $(git ls-files 'src/cmd/go/*.go' | head -20); do echo '// changed' >> $f; done && git diff | wc -l")
		}, func(d string) { sh("cd " + d + " && git diff | wc -l") }},
	}
	workloads = append(workloads, writeRows(tarball)...)
	workloads = append(workloads, buildRows(modSrc)...)
	if _, err := exec.LookPath("rg"); err == nil {
		workloads = slices.Insert(workloads, 3, workload{"rg over that tree (warm)", func(d string) {
			sh("tar xf " + tarball + " -C " + d)
			shOK("rg -c zzqqxx " + d + "/src >/dev/null")
		}, func(d string) { shOK("rg -c zzqqxx " + d + "/src >/dev/null") }})
	} else {
		fmt.Fprintln(os.Stderr, "passthrough: rg is not installed, so its row is left out (apt-get install -y ripgrep)")
	}
	return workloads
}

// writeRows are the rows that write: untar is the first row of rows.
func writeRows(tarball string) []workload {
	return []workload{
		{"rm -rf of that tree", func(d string) { sh("tar xf " + tarball + " -C " + d) }, func(d string) { sh("rm -rf " + d + "/src") }},
		// A tree the mount never saw (a build directory, a checkout from
		// before): in a window, every file's pre-image must be stored and
		// made durable before its unlink goes through.
		{seededRow, nil, func(d string) { sh("rm -rf " + d + "/src") }},
		// sed -i writes a new file and renames it over each one: every
		// file's first change, again with a durable pre-image.
		{seededSed, nil, func(d string) {
			sh("find " + d + "/src/cmd -type f -name '*.go' -print0 | xargs -0 sed -i 's/^func /func /'")
		}},
		// Right after a burst of writes (an untar): the next command must
		// not wait for the burst's post-images.
		{"sed -i over cmd/ .go files right after a tar x of them", func(d string) { sh("tar xf " + tarball + " -C " + d) }, func(d string) {
			sh("find " + d + "/src/cmd -type f -name '*.go' -print0 | xargs -0 sed -i 's/^func /func /'")
		}},
		{"create 10k small files", nil, func(d string) { smallFiles(d, 10000) }},
		{"delete 10k small files", func(d string) { smallFiles(d, 10000) }, func(d string) { sh("rm -rf " + d + "/small") }},
		{fmt.Sprintf("write %d MiB sequentially", *bigMiB), nil, func(d string) { writeBig(d, *bigMiB) }},
		{fmt.Sprintf("read %d MiB, warm", *bigMiB), func(d string) { writeBig(d, *bigMiB); readBig(d) }, readBig},
	}
}

// buildRows build and test this module in the directory.
func buildRows(modSrc string) []workload {
	return []workload{
		{"go build ./... (warm cache)", func(d string) {
			sh(fmt.Sprintf("cp -a %s/. %s/", modSrc, d))
			sh("cd " + d + " && go build ./...")
		}, func(d string) { sh("cd " + d + " && go build ./...") }},
		// Every result cached: go test hashes the sources and the test
		// binaries' inputs through the mount and runs nothing. (The
		// integration tests build ckfs before they start; they are left
		// out.)
		{"go test of every package (warm cache, results cached)", func(d string) {
			sh(fmt.Sprintf("cp -a %s/. %s/", modSrc, d))
			sh("cd " + d + " && " + goTestAll)
		}, func(d string) { sh("cd " + d + " && " + goTestAll) }},
	}
}

// measure runs every workload on every column, -n times each, and
// returns the medians.
func measure(work, tarball string, configs []config, workloads []workload) [][]time.Duration {
	res := make([][]time.Duration, len(workloads))
	for i := range res {
		res[i] = make([]time.Duration, len(configs))
	}
	// The runs of a row take turns across the columns, each round starting
	// at the next column, so a drift of this machine's disk or CPU over
	// the minutes of a row reaches every column alike. A column that fails
	// a row is reported and left out of that row; the others go on.
	for wi, w := range workloads {
		ts := make([][]time.Duration, len(configs))
		failed := make([]bool, len(configs))
		for r := range *runs {
			for k := range configs {
				ci := (r + k) % len(configs)
				if failed[ci] {
					continue
				}
				d, err := runCell(work, tarball, configs[ci], w)
				if err != nil {
					fmt.Fprintf(os.Stderr, "%-20s %-32s failed: %v\n", configs[ci].name, w.name, err)
					failed[ci] = true
					continue
				}
				ts[ci] = append(ts[ci], d)
			}
		}
		for ci, c := range configs {
			if failed[ci] {
				res[wi][ci] = cellFailed
				continue
			}
			res[wi][ci] = benchkit.Median(ts[ci])
			fmt.Fprintf(os.Stderr, "%-20s %-32s %v %v\n", c.name, w.name, res[wi][ci], ts[ci])
		}
	}
	return res
}

// cellFailed marks a cell whose column failed the row.
const cellFailed = time.Duration(-1)

// cellError is what sh panics with inside a cell.
type cellError struct{ msg string }

// inCell says sh runs inside a cell: a failure there fails the cell only.
var inCell bool

// runCell mounts the column, prepares and times the row once, and
// unmounts; a command that fails on the way fails the cell.
func runCell(work, tarball string, c config, w workload) (d time.Duration, err error) {
	var stop func()
	inCell = true
	defer func() {
		inCell = false
		if r := recover(); r != nil {
			ce, ok := r.(cellError)
			if !ok {
				panic(r)
			}
			err = errors.New(ce.msg)
		}
		if stop != nil {
			stop()
		}
	}()
	if w.name == seededRow || w.name == seededSed {
		seedTarball = tarball
	}
	var dir string
	dir, stop = c.setup(work)
	seedTarball = ""
	if w.prepare != nil {
		w.prepare(dir)
	}
	sh("sync")
	c.wrap(dir, func() {
		start := time.Now()
		w.run(dir)
		d = time.Since(start)
	})
	return d, nil
}

// printTable prints the medians as a Markdown table, with each cell's
// ratio to native.
func printTable(configs []config, workloads []workload, res [][]time.Duration) {
	fmt.Printf("ckfs passthrough benchmark — %s; median of %d runs, seconds (ratio to native)\n\n", benchkit.Machine(), *runs)
	fmt.Print("| workload |")
	for _, c := range configs {
		fmt.Printf(" %s |", c.name)
	}
	fmt.Print("\n|---|")
	for range configs {
		fmt.Print("---|")
	}
	fmt.Println()
	for wi, w := range workloads {
		fmt.Printf("| %s |", w.name)
		for ci := range configs {
			if res[wi][ci] == cellFailed || res[wi][0] == cellFailed {
				fmt.Print(" failed |")
				continue
			}
			fmt.Printf(" %.2f (%.2f×) |", res[wi][ci].Seconds(), res[wi][ci].Seconds()/res[wi][0].Seconds())
		}
		fmt.Println()
	}
}

// guardNative fails the run when a ckfs column takes more than R times
// native on the rows -max-native names: warm reads, which the cached
// model serves without a request per file.
func guardNative(configs []config, workloads []workload, res [][]time.Duration) {
	row, r, ok := strings.Cut(*maxNative, "=")
	var limit float64
	if _, err := fmt.Sscan(r, &limit); !ok || err != nil || limit <= 0 {
		benchkit.Fatalf("-max-native %q: want ROW=RATIO", *maxNative)
	}
	var bad []string
	for wi, w := range workloads {
		if !strings.Contains(w.name, row) {
			continue
		}
		for ci, c := range configs {
			if !strings.HasPrefix(c.name, "ckfs") {
				continue
			}
			if res[wi][ci] == cellFailed || res[wi][0] == cellFailed {
				bad = append(bad, fmt.Sprintf("%s, %s: failed", w.name, c.name))
				continue
			}
			if x := res[wi][ci].Seconds() / res[wi][0].Seconds(); x > limit {
				bad = append(bad, fmt.Sprintf("%s, %s: %.2f× native", w.name, c.name, x))
			}
		}
	}
	if len(bad) > 0 {
		benchkit.Fatalf("slower than %.1f× native:\n  %s", limit, strings.Join(bad, "\n  "))
	}
	fmt.Printf("every ckfs cell of the rows %q is within %.1f× native\n", row, limit)
}

// guard fails the run when a ckfs column is more than -max-ratio times
// the loopback column on a row: a ratio measured side by side, never an
// absolute time.
func guard(configs []config, workloads []workload, res [][]time.Duration) {
	lb := -1
	for ci, c := range configs {
		if c.name == "go-fuse loopback" {
			lb = ci
		}
	}
	if lb < 0 {
		benchkit.Fatalf("-max-ratio needs the go-fuse loopback column")
	}
	var bad []string
	for wi, w := range workloads {
		for ci, c := range configs {
			if !strings.HasPrefix(c.name, "ckfs") {
				continue
			}
			if res[wi][ci] == cellFailed || res[wi][lb] == cellFailed {
				bad = append(bad, fmt.Sprintf("%s, %s: failed", w.name, c.name))
				continue
			}
			if r := res[wi][ci].Seconds() / res[wi][lb].Seconds(); r > *maxRatio {
				bad = append(bad, fmt.Sprintf("%s, %s: %.2f× loopback", w.name, c.name, r))
			}
		}
	}
	if len(bad) > 0 {
		benchkit.Fatalf("slower than %.1f× plain go-fuse loopback:\n  %s", *maxRatio, strings.Join(bad, "\n  "))
	}
	fmt.Printf("\nevery ckfs cell is within %.1f× plain go-fuse loopback\n", *maxRatio)
}

var seq int

func freshDir(work, kind string) string {
	seq++
	d := filepath.Join(work, fmt.Sprintf("%s-%d", kind, seq))
	var err error
	benchkit.Make(func() { err = os.Mkdir(d, 0o755) })
	benchkit.Check(err)
	if seedTarball != "" && kind != "lb-mnt" {
		sh("tar xf " + seedTarball + " -C " + d)
	}
	return d
}

func nativeDir(work string) (string, func()) {
	d := freshDir(work, "native")
	return d, func() { os.RemoveAll(d) }
}

func loopbackDir(work string) (string, func()) { return loopbackDirWith(work) }

// loopbackDirWith mounts a fresh directory with bench/loopback run with
// flags.
func loopbackDirWith(work string, flags ...string) (string, func()) {
	back, mnt := freshDir(work, "lb-back"), freshDir(work, "lb-mnt")
	c := exec.Command(*loopbackBin, append(flags, back, mnt)...)
	out, err := c.StdoutPipe()
	benchkit.Check(err)
	benchkit.Check(c.Start())
	benchkit.OnFail(func() { c.Process.Kill(); exec.Command("umount", "-l", mnt).Run() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		benchkit.Fatalf("loopback did not start: %q", line)
	}
	return mnt, func() {
		c.Process.Signal(os.Interrupt)
		c.Wait()
		os.RemoveAll(back)
		os.RemoveAll(mnt)
	}
}

// cPassthroughDir mounts a fresh directory with libfuse's passthrough_ll
// at a mountpoint of its own, and waits for the mount to appear.
func cPassthroughDir(work string) (string, func()) {
	back, mnt := freshDir(work, "lb-back"), freshDir(work, "lb-mnt")
	c := exec.Command(*cPassthrough, "-f", "-o", "source="+back+",cache=always", mnt)
	benchkit.Check(c.Start())
	benchkit.OnFail(func() { c.Process.Kill(); exec.Command("umount", "-l", mnt).Run() })
	for i := 0; ; i++ {
		b, _ := os.ReadFile("/proc/self/mounts")
		if strings.Contains(string(b), " "+mnt+" ") {
			break
		}
		if i == 500 {
			benchkit.Fatalf("passthrough_ll did not mount %s", mnt)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return mnt, func() {
		// fusermount3 may be missing (the fuse3 package): as root, umount
		// does the same. A mount neither takes would leave Wait hanging.
		if exec.Command("fusermount3", "-u", mnt).Run() != nil && exec.Command("umount", mnt).Run() != nil {
			c.Process.Kill()
			exec.Command("umount", "-l", mnt).Run()
		}
		c.Wait()
		os.RemoveAll(back)
		os.RemoveAll(mnt)
	}
}

func ckfsEnv(work string) []string {
	return append(os.Environ(), "CKFS_HOME="+filepath.Join(work, "ckfs-home"))
}

func ckfsDir(work string) (string, func()) { return ckfsDirWith(*ckfsBin, work) }

// ckfsDirWith mounts a fresh directory in place with the ckfs binary bin,
// and the mount flags extra.
func ckfsDirWith(bin, work string, extra ...string) (string, func()) {
	d := freshDir(work, "ckfs")
	// The cleanup is in place before the mount starts, and waits for a
	// mount in flight: a benchmark interrupted while ckfs mount runs
	// would otherwise exit before the mount appears, and leave it.
	c := exec.Command(bin, append([]string{"mount", d}, extra...)...)
	c.Dir, c.Env = "/", ckfsEnv(work)
	mounting := make(chan struct{})
	benchkit.OnFail(func() {
		<-mounting
		c := exec.Command(bin, "unmount", d)
		c.Env = ckfsEnv(work)
		c.Run()
		exec.Command("umount", "-l", d).Run()
	})
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	var err error
	benchkit.Make(func() { err = c.Start() })
	if err == nil {
		err = c.Wait()
	}
	close(mounting)
	if err != nil {
		benchkit.Fatalf("ckfs mount %s: %v\n%s", d, err, out.String())
	}
	return d, func() {
		ckfsWith(bin, work, "/", "unmount", d)
		os.RemoveAll(d)
	}
}

func ckfs(work, dir string, args ...string) string { return ckfsWith(*ckfsBin, work, dir, args...) }

func ckfsWith(bin, work, dir string, args ...string) string {
	c := exec.Command(bin, args...)
	c.Dir = dir
	c.Env = ckfsEnv(work)
	out, err := c.CombinedOutput()
	if err != nil {
		benchkit.Fatalf("ckfs %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func plain(_ string, run func()) { run() }

func inWindow(dir string, run func()) { inWindowWith(*ckfsBin)(dir, run) }

// inWindowWith runs in a window opened and closed by the ckfs binary bin.
func inWindowWith(bin string) func(dir string, run func()) {
	return func(dir string, run func()) {
		work := filepath.Dir(dir)
		ckfsWith(bin, work, dir, "window", "open", "--id", "bench")
		run()
		ckfsWith(bin, work, dir, "window", "close", "--id", "bench")
	}
}

func smallFiles(dir string, n int) {
	d := filepath.Join(dir, "small")
	benchkit.Check(os.MkdirAll(d, 0o755))
	body := []byte("package small // a small file\n")
	for i := range n {
		benchkit.Check(os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), body, 0o644))
	}
}

func writeBig(dir string, mib int) {
	f, err := os.Create(filepath.Join(dir, "big"))
	benchkit.Check(err)
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for range mib {
		_, err := f.Write(buf)
		benchkit.Check(err)
	}
	benchkit.Check(f.Close())
}

func readBig(dir string) {
	f, err := os.Open(filepath.Join(dir, "big"))
	benchkit.Check(err)
	_, err = io.Copy(io.Discard, f)
	benchkit.Check(err)
	f.Close()
}

// memoryRow mounts a tree of n files, walks it with stat, and reports the
// daemon's peak RSS (VmHWM, KiB) with the line that reports it.
func memoryRow(work string, n int) (int, string) {
	d := freshDir(work, "mem")
	for i := range n {
		sub := filepath.Join(d, fmt.Sprintf("d%03d", i/1000))
		if i%1000 == 0 {
			benchkit.Check(os.Mkdir(sub, 0o755))
		}
		benchkit.Check(os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d", i%1000)), nil, 0o644))
	}
	ckfs(work, "/", "mount", d)
	defer ckfs(work, "/", "unmount", d)
	count := 0
	filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err == nil {
			e.Info()
			count++
		}
		return nil
	})
	out := ckfs(work, d, "status", "--json")
	var pid int
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"pid"`) {
			fmt.Sscanf(strings.TrimSpace(l), `"pid": %d`, &pid)
		}
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	kb, anon, file := -1, -1, -1
	for _, l := range strings.Split(string(status), "\n") {
		for _, f := range []struct {
			key string
			to  *int
		}{{"VmHWM:", &kb}, {"RssAnon:", &anon}, {"RssFile:", &file}} {
			if strings.HasPrefix(l, f.key) {
				fmt.Sscanf(strings.TrimPrefix(l, f.key), "%d", f.to)
			}
		}
	}
	if kb < 0 {
		benchkit.Fatalf("no peak RSS for daemon %d in /proc (status --json said %q)", pid, out)
	}
	return kb, fmt.Sprintf("Daemon peak RSS after walking (lstat) %d entries of a %d-file tree: %d kB (now %d kB anonymous, %d kB file pages)", count, n, kb, anon, file)
}

func sh(cmd string) string {
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	if err != nil {
		if inCell {
			panic(cellError{fmt.Sprintf("%s: %v: %s", cmd, err, strings.TrimSpace(string(out)))})
		}
		benchkit.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// goTestAll runs no test of ckfs's packages but the integration tests'.
const goTestAll = "go test -run '^$' $(go list ./... | grep -v /integration) >/dev/null"

// shOK is sh for commands whose exit status 1 means "no match".
func shOK(cmd string) {
	exec.Command("sh", "-c", cmd).Run()
}
