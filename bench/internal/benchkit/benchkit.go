// Package benchkit holds what ckfs's benchmark programs share: running a
// command, failing without leaving a mount behind, medians, directory
// sizes, and the machine line of every table's header.
package benchkit

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cleanups undo what a benchmark mounted or started, newest first, when it
// fails or is interrupted: log.Fatal alone would skip every deferred
// unmount.
var (
	mu       sync.Mutex
	cleanups []func()
	failing  bool // under mu: the cleanups have run or are running
)

// Make runs make (a directory created, a process started) unless the
// benchmark is failing, so that nothing is made after the cleanups that
// would have removed it: once failing, it waits for the exit.
func Make(make func()) {
	mu.Lock()
	defer mu.Unlock()
	if failing {
		select {}
	}
	make()
}

// OnFail registers f to run if the benchmark fails.
func OnFail(f func()) {
	mu.Lock()
	defer mu.Unlock()
	cleanups = append(cleanups, f)
}

// An interrupted benchmark (Ctrl-C, kill) fails: it unmounts and stops
// what it started first.
func init() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		Fatalf("interrupted by %v", s)
	}()
}

// Unmounted registers a mount point to detach if the benchmark fails (a
// ckfs daemon stops when its mount goes away).
func Unmounted(mountpoint string) {
	OnFail(func() { exec.Command("umount", "-l", mountpoint).Run() })
}

// Fatalf runs the cleanups and exits with the message.
func Fatalf(format string, a ...any) {
	mu.Lock()
	failing = true
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	mu.Unlock()
	log.Fatalf(format, a...)
}

// Check fails the benchmark on err.
func Check(err error) {
	if err != nil {
		Fatalf("%v", err)
	}
}

// Run runs name with args in dir with env and returns its stdout; it fails
// the benchmark, with the command's stderr, if the command fails.
func Run(env []string, dir, name string, args ...string) []byte {
	c := exec.Command(name, args...)
	c.Env, c.Dir = env, dir
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// Median returns the median of ts (and sorts ts).
func Median(ts []time.Duration) time.Duration {
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2]
}

// Select returns the items whose name contains one of the
// comma-separated patterns, each once and in order; all of them when
// patterns is empty. It is what -only and -columns do.
func Select[T any](items []T, patterns string, name func(T) string) []T {
	if patterns == "" {
		return items
	}
	var keep []T
	for _, it := range items {
		for _, p := range strings.Split(patterns, ",") {
			if p != "" && strings.Contains(name(it), p) {
				keep = append(keep, it)
				break
			}
		}
	}
	return keep
}

// Machine describes the run for a table's header: date, CPUs, kernel, Go.
func Machine() string {
	out, _ := exec.Command("uname", "-sr").Output()
	return fmt.Sprintf("%s, %d CPUs, %s, %s", time.Now().Format("2006-01-02"), runtime.NumCPU(), strings.TrimSpace(string(out)), runtime.Version())
}

// TempDir makes the benchmark's scratch directory, removed at the end or
// on failure.
func TempDir(pattern string) (string, func()) {
	d, err := os.MkdirTemp("", pattern)
	Check(err)
	OnFail(func() { os.RemoveAll(d) })
	return d, func() { os.RemoveAll(d) }
}

// GoRoot is the Go distribution the go command on PATH uses (its sources
// are the benchmarks' realistic input).
func GoRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Exists reports whether a file is at path.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
