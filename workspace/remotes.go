package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/internal/safename"
	"github.com/gofrs/flock"
	"github.com/google/uuid"
)

// Remotes is a store's remotes.json: the buckets the workspace pushes to,
// its id there (the same in every one), and how far each push got. The
// bucket side is package remote's; this is the store's file.
type Remotes struct {
	Workspace string                  `json:"workspace"`
	Remotes   map[string]RemoteConfig `json:"remotes"`
}

// RemoteConfig is one remote.
type RemoteConfig struct {
	URL      string `json:"url"`                // s3://BUCKET[/PREFIX]
	Endpoint string `json:"endpoint,omitempty"` // host:port, or an http(s):// URL; default from the environment
	// Pushed is the last seq the bucket holds (with every object its
	// records need), as of PushedAt; LastError is the last failed push's
	// error, cleared by a push that succeeds.
	Pushed    uint64    `json:"pushed_seq,omitempty"`
	PushedAt  time.Time `json:"pushed_at,omitzero"`
	LastError string    `json:"last_error,omitempty"`
	ErrorAt   time.Time `json:"error_at,omitzero"`
}

// ValidRemoteName reports whether s can name a remote.
func ValidRemoteName(s string) bool { return safename.Valid(s, 64) }

// LoadRemotes reads the store's remotes; a store with none has an empty
// configuration (and no workspace id yet).
func LoadRemotes(store string) (*Remotes, error) {
	path := Layout(store).Remotes()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Remotes{Remotes: map[string]RemoteConfig{}}, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := ParseRemotes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix or remove the file, then ckfs remote add again)", path, err)
	}
	return c, nil
}

// ParseRemotes reads remotes.json strictly.
func ParseRemotes(data []byte) (*Remotes, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Remotes
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if c.Workspace != "" && !safename.Valid(c.Workspace, 64) {
		return nil, fmt.Errorf("bad workspace id %q", c.Workspace)
	}
	if c.Remotes == nil {
		c.Remotes = map[string]RemoteConfig{}
	}
	for name, r := range c.Remotes {
		if !ValidRemoteName(name) {
			return nil, fmt.Errorf("bad remote name %q", name)
		}
		if !strings.HasPrefix(r.URL, "s3://") {
			return nil, fmt.Errorf("remote %s: URL %q is not s3://", name, r.URL)
		}
	}
	return &c, nil
}

// Names returns the remotes' names in order.
func (c *Remotes) Names() []string {
	out := make([]string, 0, len(c.Remotes))
	for n := range c.Remotes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// UpdateRemotes changes the store's remotes.json under its lock (the
// daemon's uploader and commands write it), giving the workspace an id
// first if it has none, and writes it durably.
func UpdateRemotes(store string, change func(*Remotes) error) (*Remotes, error) {
	lk := flock.New(Layout(store).Remotes() + ".lock")
	if err := lk.Lock(); err != nil {
		return nil, err
	}
	defer lk.Unlock()
	c, err := LoadRemotes(store)
	if err != nil {
		return nil, err
	}
	if err := change(c); err != nil {
		return nil, err
	}
	if c.Workspace == "" {
		c.Workspace = uuid.Must(uuid.NewV7()).String()
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if old, err := os.ReadFile(Layout(store).Remotes()); err == nil && bytes.Equal(old, b) {
		return c, nil // unchanged: no write, no sync
	}
	return c, durable.WriteFile(Layout(store).Remotes(), b, 0o600)
}

// pushCeiling is how far a collection may move the watermark of a store
// with remotes: checkpoints after the least pushed seq are not yet
// anywhere else, so they stay restorable here. ok is false for a store
// without remotes (no ceiling).
func pushCeiling(store string) (seq uint64, why string, ok bool, err error) {
	c, err := LoadRemotes(store)
	if err != nil || len(c.Remotes) == 0 {
		return 0, "", false, err
	}
	first := true
	for _, n := range c.Names() {
		r := c.Remotes[n]
		if first || r.Pushed < seq {
			seq, why, first = r.Pushed, fmt.Sprintf("checkpoints after seq %d are not yet pushed to remote %s", r.Pushed, n), false
		}
	}
	return seq, why, true, nil
}
