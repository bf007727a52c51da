package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/internal/gendocs"
	"github.com/spf13/cobra"
)

// The CLI reference and the man pages are generated from the commands'
// own help; this fails when they are stale.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	files, err := gendocs.Files(newRootCmd())
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale or missing: run go run -tags gendocs ./cmd/ckfs gen-docs .", rel)
		}
	}
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "man", "*.1"))
	for _, p := range pages {
		rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
		if _, ok := files[rel]; !ok {
			t.Errorf("%s documents a command that no longer exists: run go run -tags gendocs ./cmd/ckfs gen-docs .", rel)
		}
	}
}

// Every command a person runs says what it does and shows an example.
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		if c.Runnable() && c.Name() != "completion" && c.Example == "" {
			t.Errorf("%s has no example in its help", c.CommandPath())
		}
		if c.Short == "" {
			t.Errorf("%s has no short description", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	root := newRootCmd()
	root.InitDefaultCompletionCmd()
	walk(root)
}
