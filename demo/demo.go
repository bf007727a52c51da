// Package demo is ckfs demo: a scratch repository mounted in place, two
// tool windows of real shell edits, the log, a previewed and a performed
// rewind, its undo, every byte checked, and everything unmounted and
// removed again. It drives the ckfs binary as a user would.
package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ckfs-dev/ckfs/workspace"
)

// files are the scratch repository.
var files = map[string]string{
	"main.go":         "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"Hello, world\")\n}\n",
	"util/strings.go": "package util\n\n// Shout upper-cases s.\nfunc Shout(s string) string { return s + \"!\" }\n",
	"README.md":       "# demo\n\nA scratch repository for the ckfs demo.\n",
}

// Run runs the demo with the ckfs binary exe, printing each step and its
// output to out; keep keeps the scratch directory. It fails when a byte is
// not where a step should have put it.
func Run(out io.Writer, exe string, keep bool) (err error) {
	workspace.AdoptOrphans()
	defer workspace.ReapChildren()
	// Interrupted (Ctrl-C, a closed terminal, or output piped into head),
	// the demo still unmounts and removes what it made: a signal stops the
	// next step, and a closed output only loses the output.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	tmp, err := os.MkdirTemp("", "ckfs-demo-")
	if err != nil {
		return err
	}
	repo, home := filepath.Join(tmp, "repo"), filepath.Join(tmp, "state")
	if err := writeFiles(repo); err != nil {
		return err
	}
	env := append(os.Environ(), "CKFS_HOME="+home)
	step := func(dir string, show bool, name string, args ...string) (string, error) {
		return runStep(ctx, out, env, dir, show, name, args...)
	}
	ckfs := func(show bool, args ...string) (string, error) { return step(repo, show, exe, args...) }
	mounted := false
	defer func() {
		if mounted {
			if _, uerr := step("/", true, exe, "unmount", repo); uerr != nil && err == nil {
				err = uerr
			}
		}
		if keep {
			fmt.Fprintf(out, "\nthe scratch repository is kept in %s (store in %s)\n", repo, home)
		} else {
			os.RemoveAll(tmp)
		}
	}()

	fmt.Fprintf(out, "A scratch repository in %s with main.go, util/strings.go and README.md.\n", repo)
	if _, err := step("/", true, exe, "mount", repo); err != nil {
		return err
	}
	mounted = true
	original := snapshotDir(repo)
	if _, err := ckfs(false, "run", "--label", "rename the greeting", "--", "sed", "-i", "s/Hello/Howdy/", "main.go"); err != nil {
		return err
	}
	script := `mkdir -p gen && for i in 1 2 3; do echo "// generated $i" > gen/file$i.go; done && rm util/strings.go && echo "Run: go run ." >> README.md`
	if _, err := ckfs(false, "run", "--label", "generate code", "--", "sh", "-c", script); err != nil {
		return err
	}
	edited := snapshotDir(repo)
	if _, err := ckfs(true, "log"); err != nil {
		return err
	}
	if _, err := ckfs(true, "rewind", "--last", "2"); err != nil {
		return err
	}
	if got := snapshotDir(repo); got != edited {
		return fmt.Errorf("demo: the preview changed the workspace")
	}
	if _, err := ckfs(true, "rewind", "--files", "--last", "2"); err != nil {
		return err
	}
	if got := snapshotDir(repo); got != original {
		return fmt.Errorf("demo: after the rewind the workspace is\n%s\nwant\n%s", got, original)
	}
	fmt.Fprintln(out, "\nchecked: every file is byte for byte as it was before the first window.")
	if _, err := ckfs(true, "rewind", "--files", "--undo"); err != nil {
		return err
	}
	if got := snapshotDir(repo); got != edited {
		return fmt.Errorf("demo: after the undo the workspace is\n%s\nwant\n%s", got, edited)
	}
	fmt.Fprintln(out, "\nchecked: the undo put back every byte the agent wrote.")
	fmt.Fprintln(out, "\ndemo passed")
	return nil
}

// writeFiles makes the scratch repository.
func writeFiles(repo string) error {
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// runStep shows and runs one command of the demo in dir, printing its
// output when show is set or it fails. Once ctx is done, only an unmount
// still runs.
func runStep(ctx context.Context, out io.Writer, env []string, dir string, show bool, name string, args ...string) (string, error) {
	if ctx.Err() != nil && !(len(args) > 0 && args[0] == "unmount") {
		return "", errors.New("interrupted")
	}
	fmt.Fprintf(out, "\n$ %s %s\n", filepath.Base(name), strings.Join(quoteArgs(args), " "))
	c := exec.Command(name, args...)
	c.Dir, c.Env = dir, env
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	if show || err != nil {
		out.Write(b.Bytes())
	}
	if err != nil {
		return b.String(), fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return b.String(), nil
}

// snapshotDir describes every path under dir with its bytes.
func snapshotDir(dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case info.IsDir():
			fmt.Fprintf(&b, "%s/ %v\n", rel, info.Mode())
		default:
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%s %v %q\n", rel, info.Mode(), data)
		}
		return nil
	})
	return b.String()
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t'\"$;&|<>*") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
