package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/safename"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/google/uuid"
)

// Config is a store's remotes.json: the remotes the workspace pushes to
// and its id in them, the same in every remote.
type Config struct {
	Workspace string            `json:"workspace"`
	Remotes   map[string]Remote `json:"remotes"`
}

// LoadConfig reads the store's remotes; a store with none has an empty
// configuration (and no id yet).
func LoadConfig(store string) (*Config, error) {
	path := workspace.Layout(store).Remotes()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{Remotes: map[string]Remote{}}, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix or remove the file, then ckfs remote add again)", path, err)
	}
	return c, nil
}

func parseConfig(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if c.Workspace != "" && !ValidWorkspace(c.Workspace) {
		return nil, fmt.Errorf("bad workspace id %q", c.Workspace)
	}
	if c.Remotes == nil {
		c.Remotes = map[string]Remote{}
	}
	for name, r := range c.Remotes {
		if !ValidName(name) {
			return nil, fmt.Errorf("bad remote name %q", name)
		}
		if _, _, err := ParseURL(r.URL); err != nil {
			return nil, fmt.Errorf("remote %s: %w", name, err)
		}
	}
	return &c, nil
}

// ValidName reports whether s can name a remote.
func ValidName(s string) bool { return safename.Valid(s, 64) && !strings.Contains(s, "://") }

// Save writes the configuration durably, giving the workspace an id first
// if it has none.
func (c *Config) Save(store string) error {
	if c.Workspace == "" {
		c.Workspace = uuid.Must(uuid.NewV7()).String()
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(workspace.Layout(store).Remotes(), append(b, '\n'), 0o600)
}

// Names returns the remotes' names in order.
func (c *Config) Names() []string {
	out := make([]string, 0, len(c.Remotes))
	for n := range c.Remotes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Resolve finds a remote by name, or takes an s3:// URL as one (with the
// endpoint given). With name "" it is the only remote configured.
func (c *Config) Resolve(name, endpoint string) (Remote, error) {
	if strings.HasPrefix(name, "s3://") {
		if _, _, err := ParseURL(name); err != nil {
			return Remote{}, workspace.Errorf(workspace.ErrUsage, "%v", err)
		}
		return Remote{URL: name, Endpoint: endpoint}, nil
	}
	if name == "" {
		if len(c.Remotes) != 1 {
			return Remote{}, workspace.Errorf(workspace.ErrUsage, "%d remotes are configured: name one with --remote (ckfs remote add NAME s3://BUCKET/PREFIX adds one)", len(c.Remotes))
		}
		name = c.Names()[0]
	}
	r, ok := c.Remotes[name]
	if !ok {
		return Remote{}, workspace.Errorf(workspace.ErrUsage, "no remote %q (ckfs remote list shows them; --remote also takes an s3:// URL)", name)
	}
	if endpoint != "" {
		r.Endpoint = endpoint
	}
	return r, nil
}
