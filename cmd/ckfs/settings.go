package main

import (
	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/gc"
)

// loadConfig returns the effective configuration for the repository at
// root and the file it came from.
func loadConfig(root string) (*config.Config, string, error) {
	path, err := config.Path()
	if err != nil {
		return nil, "", err
	}
	c, err := config.Load(path, root)
	return c, path, err
}

// retentionPolicy is the configured retention as a gc policy.
func retentionPolicy(c *config.Config) gc.Policy {
	return gc.Policy{Keep: c.Retention.Keep, MaxAge: c.Retention.MaxAge, MaxSize: c.Retention.MaxSize}
}
