// Package config reads ckfs's configuration file: a global TOML file with
// per-repository overrides. It knows settings and where each came from,
// nothing of the store or the mount.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Config is the effective configuration for one repository.
type Config struct {
	Capture      Capture
	Retention    Retention
	Conversation Conversation
	Remote       Remote
	// Sources maps a dotted key ("retention.keep") to where its value came
	// from: "default", or "FILE:LINE".
	Sources map[string]string
}

// Capture is the [capture] table.
type Capture struct {
	Enabled     bool
	Exclude     []string
	MaxFileSize int64
	// IO is how a mount in place serves files: IOCached (the kernel opens
	// files without asking and keeps their pages) or IOPassthrough (every
	// open is a request, with kernel passthrough).
	IO string
}

// The values of capture.io.
const (
	IOCached      = "cached"
	IOPassthrough = "passthrough"
)

// Retention is the [retention] table. A zero MaxAge or MaxSize means no
// limit of that kind.
type Retention struct {
	Keep    int
	MaxAge  time.Duration
	MaxSize int64
	AutoGC  bool
}

// Conversation is the [conversation] table.
type Conversation struct {
	Summarizer string
}

// Remote is the [remote] table: the remote every new workspace gets at
// its first mount (none when URL is "").
type Remote struct {
	Name     string
	URL      string
	Endpoint string
}

// Defaults are the values used where no file sets one.
func Defaults() *Config {
	c := &Config{
		Capture:   Capture{Enabled: true, MaxFileSize: 16 << 20, IO: IOCached},
		Retention: Retention{Keep: 100, AutoGC: true},
		Remote:    Remote{Name: "origin"},
		Sources:   map[string]string{},
	}
	for _, k := range Keys {
		c.Sources[k] = "default"
	}
	return c
}

// Keys lists every setting, in the order config show prints them.
var Keys = []string{
	"capture.enabled", "capture.exclude", "capture.max_file_size", "capture.io",
	"retention.keep", "retention.max_age", "retention.max_size", "retention.auto_gc",
	"conversation.summarizer",
	"remote.name", "remote.url", "remote.endpoint",
}

// Path returns the configuration file ckfs reads: $CKFS_CONFIG, else
// $XDG_CONFIG_HOME/ckfs/config.toml, else ~/.config/ckfs/config.toml.
func Path() (string, error) {
	if p := os.Getenv("CKFS_CONFIG"); p != "" {
		return filepath.Abs(p)
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "ckfs", "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the configuration file: set CKFS_CONFIG or XDG_CONFIG_HOME (%w)", err)
	}
	return filepath.Join(home, ".config", "ckfs", "config.toml"), nil
}

// Load returns the effective configuration for the repository at root (an
// absolute path) from the file at path. A missing file gives the defaults.
func Load(path, root string) (*Config, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return Defaults(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read configuration %s: %w", path, err)
	}
	return Parse(path, data, root)
}

// For returns the effective configuration for the repository at root
// from the file Path names, and that file's path.
func For(root string) (*Config, string, error) {
	path, err := Path()
	if err != nil {
		return nil, "", err
	}
	c, err := Load(path, root)
	return c, path, err
}

// Value renders the value of a key for people.
func (c *Config) Value(key string) string {
	switch key {
	case "capture.enabled":
		return fmt.Sprint(c.Capture.Enabled)
	case "capture.exclude":
		return fmt.Sprintf("%q", c.Capture.Exclude)
	case "capture.max_file_size":
		return FormatSize(c.Capture.MaxFileSize)
	case "capture.io":
		return fmt.Sprintf("%q", c.Capture.IO)
	case "retention.keep":
		return fmt.Sprint(c.Retention.Keep)
	case "retention.max_age":
		return FormatDuration(c.Retention.MaxAge)
	case "retention.max_size":
		return FormatSize(c.Retention.MaxSize)
	case "retention.auto_gc":
		return fmt.Sprint(c.Retention.AutoGC)
	case "conversation.summarizer":
		return fmt.Sprintf("%q", c.Conversation.Summarizer)
	case "remote.name":
		return fmt.Sprintf("%q", c.Remote.Name)
	case "remote.url":
		return fmt.Sprintf("%q", c.Remote.URL)
	case "remote.endpoint":
		return fmt.Sprintf("%q", c.Remote.Endpoint)
	}
	return ""
}
