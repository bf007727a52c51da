// Package gendocs renders ckfs's command tree as the CLI reference
// (docs/cli.md) and man pages (docs/man/), with cobra's doc generator, so
// the documentation is the commands' own help and a test can tell when it
// is stale.
package gendocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Files renders every document: path (relative to the repository root) to
// content.
func Files(root *cobra.Command) (map[string][]byte, error) {
	root.DisableAutoGenTag = true
	out := map[string][]byte{}
	var md bytes.Buffer
	md.WriteString("# ckfs command reference\n\nGenerated from the commands' own help by `go run -tags gendocs ./cmd/ckfs gen-docs .`; `go test ./cmd/ckfs` fails when this file is stale. The exit codes are in the description of `ckfs` below.\n\n")
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		c.DisableAutoGenTag = true
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].CommandPath() < cmds[j].CommandPath() })
	for _, c := range cmds {
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, func(name string) string {
			return "#" + strings.TrimSuffix(strings.ReplaceAll(name, "_", "-"), ".md")
		}); err != nil {
			return nil, err
		}
		// One document: demote each command's headings by one level.
		text := strings.ReplaceAll(b.String(), "\n## ", "\n### ")
		text = strings.Replace(text, "## "+c.CommandPath(), "## "+c.CommandPath(), 1)
		md.WriteString(text)
		md.WriteString("\n")
	}
	out["docs/cli.md"] = md.Bytes()
	// A fixed date, so regenerating unchanged help changes no file.
	date := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hdr := &doc.GenManHeader{Title: "CKFS", Section: "1", Source: "ckfs", Manual: "ckfs manual", Date: &date}
	for _, c := range cmds {
		var b bytes.Buffer
		if err := doc.GenMan(c, hdr, &b); err != nil {
			return nil, err
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		out[filepath.Join("docs", "man", name)] = b.Bytes()
	}
	return out, nil
}

// Write writes the documents under dir (the repository root), removing man
// pages of commands that no longer exist.
func Write(root *cobra.Command, dir string) error {
	files, err := Files(root)
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "docs", "man", "*.1"))
	for _, p := range old {
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[rel]; !ok {
			os.Remove(p)
		}
	}
	for rel, b := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}
