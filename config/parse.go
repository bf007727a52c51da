package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/ckfs-dev/ckfs/internal/safename"
)

// file is the shape of the configuration file. Values whose form is ours
// (sizes, durations) decode as any and are checked afterwards, so an error
// names the key and its line.
type file struct {
	Capture      *captureT          `toml:"capture"`
	Retention    *retentionT        `toml:"retention"`
	Conversation *conversationT     `toml:"conversation"`
	Remote       *remoteT           `toml:"remote"`
	Repo         map[string]section `toml:"repo"`
}

type section struct {
	Capture      *captureT      `toml:"capture"`
	Retention    *retentionT    `toml:"retention"`
	Conversation *conversationT `toml:"conversation"`
	Remote       *remoteT       `toml:"remote"`
}

type captureT struct {
	Enabled     *bool    `toml:"enabled"`
	Exclude     []string `toml:"exclude"`
	MaxFileSize any      `toml:"max_file_size"`
	IO          *string  `toml:"io"`
}

type retentionT struct {
	Keep    *int  `toml:"keep"`
	MaxAge  any   `toml:"max_age"`
	MaxSize any   `toml:"max_size"`
	AutoGC  *bool `toml:"auto_gc"`
}

type conversationT struct {
	Summarizer *string `toml:"summarizer"`
}

type remoteT struct {
	Name     *string `toml:"name"`
	URL      *string `toml:"url"`
	Endpoint *string `toml:"endpoint"`
}

// Parse reads the configuration in data (from the file named path) and
// returns the effective configuration for root: the global tables, then
// the [repo."ROOT"] tables whose path is root, key by key.
func Parse(path string, data []byte, root string) (*Config, error) {
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s (fix the file or move it away)", path, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s: %v (fix the file or move it away)", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var msgs []string
		for _, k := range und {
			msgs = append(msgs, fmt.Sprintf("%s:%d: unknown key %q", path, keyLine(data, k), k.String()))
		}
		return nil, fmt.Errorf("%s\n(known keys: %s; see docs/configuration.md)", strings.Join(msgs, "\n"), strings.Join(Keys, ", "))
	}
	c := Defaults()
	a := applier{c: c, path: path, data: data}
	a.section(nil, f.Capture, f.Retention, f.Conversation)
	a.remote(nil, f.Remote)
	for p, s := range f.Repo {
		if !sameDir(p, root) {
			continue
		}
		a.section(toml.Key{"repo", p}, s.Capture, s.Retention, s.Conversation)
		a.remote(toml.Key{"repo", p}, s.Remote)
	}
	if a.err != nil {
		return nil, a.err
	}
	return c, nil
}

// sameDir reports whether the repository key p names root. "~/" expands
// to the home directory.
func sameDir(p, root string) bool {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	return filepath.Clean(p) == filepath.Clean(root)
}

type applier struct {
	c    *Config
	path string
	data []byte
	err  error
}

func (a *applier) set(prefix toml.Key, table, name string, apply func() error) {
	k := append(append(toml.Key{}, prefix...), table, name)
	where := fmt.Sprintf("%s:%d", a.path, keyLine(a.data, k))
	if err := apply(); err != nil {
		if a.err == nil {
			a.err = fmt.Errorf("%s: %s: %v", where, k.String(), err)
		}
		return
	}
	a.c.Sources[table+"."+name] = where
}

func (a *applier) section(prefix toml.Key, c *captureT, r *retentionT, v *conversationT) {
	if c != nil {
		if c.Enabled != nil {
			a.set(prefix, "capture", "enabled", func() error { a.c.Capture.Enabled = *c.Enabled; return nil })
		}
		if c.Exclude != nil {
			a.set(prefix, "capture", "exclude", func() error {
				for _, g := range c.Exclude {
					if _, err := filepath.Match(g, ""); err != nil {
						return fmt.Errorf("bad glob %q: %v", g, err)
					}
				}
				a.c.Capture.Exclude = c.Exclude
				return nil
			})
		}
		if c.IO != nil {
			a.set(prefix, "capture", "io", func() error {
				if *c.IO != IOCached && *c.IO != IOPassthrough {
					return fmt.Errorf("%q: want %q or %q", *c.IO, IOCached, IOPassthrough)
				}
				a.c.Capture.IO = *c.IO
				return nil
			})
		}
		if c.MaxFileSize != nil {
			a.set(prefix, "capture", "max_file_size", func() error {
				n, err := sizeValue(c.MaxFileSize)
				if err == nil && n <= 0 {
					err = errors.New("must be positive")
				}
				a.c.Capture.MaxFileSize = n
				return err
			})
		}
	}
	if r != nil {
		if r.Keep != nil {
			a.set(prefix, "retention", "keep", func() error {
				if *r.Keep < 1 {
					return fmt.Errorf("%d: keep at least 1 checkpoint", *r.Keep)
				}
				a.c.Retention.Keep = *r.Keep
				return nil
			})
		}
		if r.MaxAge != nil {
			a.set(prefix, "retention", "max_age", func() error {
				s, ok := r.MaxAge.(string)
				if !ok {
					return fmt.Errorf("want a duration string such as \"30d\" or \"12h\", got %v", r.MaxAge)
				}
				d, err := ParseDuration(s)
				a.c.Retention.MaxAge = d
				return err
			})
		}
		if r.MaxSize != nil {
			a.set(prefix, "retention", "max_size", func() error {
				n, err := sizeValue(r.MaxSize)
				a.c.Retention.MaxSize = n
				return err
			})
		}
		if r.AutoGC != nil {
			a.set(prefix, "retention", "auto_gc", func() error { a.c.Retention.AutoGC = *r.AutoGC; return nil })
		}
	}
	if v != nil && v.Summarizer != nil {
		a.set(prefix, "conversation", "summarizer", func() error { a.c.Conversation.Summarizer = *v.Summarizer; return nil })
	}
}

// remote applies a [remote] table. The URL's form is checked here; that
// a bucket answers there is checked when a workspace gets it.
func (a *applier) remote(prefix toml.Key, r *remoteT) {
	if r == nil {
		return
	}
	if r.Name != nil {
		a.set(prefix, "remote", "name", func() error {
			if !safename.Valid(*r.Name, 64) {
				return fmt.Errorf("%q: use letters, digits, '.', '_' and '-'", *r.Name)
			}
			a.c.Remote.Name = *r.Name
			return nil
		})
	}
	if r.URL != nil {
		a.set(prefix, "remote", "url", func() error {
			if *r.URL != "" && !strings.HasPrefix(*r.URL, "s3://") {
				return fmt.Errorf("%q: want s3://BUCKET or s3://BUCKET/PREFIX", *r.URL)
			}
			a.c.Remote.URL = *r.URL
			return nil
		})
	}
	if r.Endpoint != nil {
		a.set(prefix, "remote", "endpoint", func() error { a.c.Remote.Endpoint = *r.Endpoint; return nil })
	}
}

// sizeValue accepts an integer number of bytes or a size string.
func sizeValue(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("negative size %d", x)
		}
		return x, nil
	case string:
		return ParseSize(x)
	}
	return 0, fmt.Errorf("want bytes or a size such as \"10GiB\", got %v", v)
}
