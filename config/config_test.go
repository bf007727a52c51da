package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const sample = `# ckfs configuration
[capture]
exclude = ["node_modules", "*.log"]
max_file_size = "8MiB"

[retention]
keep = 50
max_age = "30d"
max_size = "10GiB"

[conversation]
summarizer = "claude -p"

[repo."/src/big".retention]
keep = 500
auto_gc = false

[repo."/src/big".capture]
enabled = false
`

func TestParseEffective(t *testing.T) {
	c, err := Parse("cfg.toml", []byte(sample), "/src/small")
	if err != nil {
		t.Fatal(err)
	}
	want := Retention{Keep: 50, MaxAge: 30 * 24 * time.Hour, MaxSize: 10 << 30, AutoGC: true}
	if diff := cmp.Diff(want, c.Retention); diff != "" {
		t.Errorf("retention (-want +got):\n%s", diff)
	}
	if !c.Capture.Enabled || c.Capture.MaxFileSize != 8<<20 || len(c.Capture.Exclude) != 2 {
		t.Errorf("capture = %+v", c.Capture)
	}
	if c.Sources["retention.keep"] != "cfg.toml:7" || c.Sources["retention.auto_gc"] != "default" {
		t.Errorf("sources = %v", c.Sources)
	}

	big, err := Parse("cfg.toml", []byte(sample), "/src/big/")
	if err != nil {
		t.Fatal(err)
	}
	if big.Retention.Keep != 500 || big.Retention.AutoGC || big.Capture.Enabled {
		t.Errorf("repo override not applied: %+v %+v", big.Retention, big.Capture)
	}
	if big.Retention.MaxSize != 10<<30 {
		t.Errorf("global value lost under a repo override: %+v", big.Retention)
	}
	if got := big.Sources["retention.keep"]; got != "cfg.toml:15" {
		t.Errorf("source of repo keep = %q, want cfg.toml:15", got)
	}
}

func TestParseRemote(t *testing.T) {
	in := "[remote]\nurl = \"s3://agents/ckfs\"\nendpoint = \"http://127.0.0.1:8333\"\n[repo.\"/src/big\".remote]\nname = \"team\"\n"
	c, err := Parse("cfg.toml", []byte(in), "/src/small")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Remote{Name: "origin", URL: "s3://agents/ckfs", Endpoint: "http://127.0.0.1:8333"}); c.Remote != want {
		t.Errorf("remote = %+v, want %+v", c.Remote, want)
	}
	if c.Sources["remote.url"] != "cfg.toml:2" || c.Sources["remote.name"] != "default" {
		t.Errorf("sources = %v", c.Sources)
	}
	big, err := Parse("cfg.toml", []byte(in), "/src/big")
	if err != nil || big.Remote.Name != "team" || big.Remote.URL != "s3://agents/ckfs" {
		t.Errorf("repo override of remote.name: %+v, %v", big.Remote, err)
	}
	if d := Defaults(); d.Remote.URL != "" {
		t.Errorf("a remote by default: %+v", d.Remote)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown key", "[retention]\nkeep = 3\nkepp = 4\n", `cfg.toml:3: unknown key "retention.kepp"`},
		{"unknown table", "[retension]\nkeep = 3\n", `cfg.toml:1: unknown key "retension"`},
		{"unknown repo key", "[repo.\"/x\".capture]\nexcludes = []\n", `cfg.toml:2: unknown key "repo.\"/x\".capture.excludes"`},
		{"bad size", "[retention]\nmax_size = \"lots\"\n", `cfg.toml:2: retention.max_size: bad size "lots"`},
		{"bad age", "[retention]\nmax_age = \"soon\"\n", `cfg.toml:2: retention.max_age: bad duration "soon"`},
		{"age not string", "[retention]\nmax_age = 3\n", `cfg.toml:2: retention.max_age: want a duration string`},
		{"keep zero", "[retention]\nkeep = 0\n", `cfg.toml:2: retention.keep: 0: keep at least 1`},
		{"wrong type", "[retention]\nkeep = \"many\"\n", `cfg.toml`},
		{"syntax", "[retention\nkeep = 1\n", `cfg.toml:2: expected`},
		{"bad glob", "[capture]\nexclude = [\"[\"]\n", `cfg.toml:2: capture.exclude: bad glob`},
		{"remote url", "[remote]\nurl = \"https://b\"\n", `cfg.toml:2: remote.url: "https://b": want s3://BUCKET`},
		{"remote name", "[remote]\nname = \"a b\"\n", `cfg.toml:2: remote.name: "a b": use letters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cfg.toml", []byte(tc.in), "/r")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "1K": 1024, "8MiB": 8 << 20, "1.5G": 3 << 29, "2 GB": 2e9} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1X", "GiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	for in, want := range map[string]time.Duration{"30d": 720 * time.Hour, "2w": 336 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-3d", "soon", "3x"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("[retention]\nkeep = 3\nkepp = 4\n"))
	f.Add([]byte("[repo.'~/x'.capture]\nmax_file_size = 12\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.toml", data, "/src/big")
		if err != nil {
			if !strings.Contains(err.Error(), "f.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if c.Retention.Keep < 1 || c.Capture.MaxFileSize <= 0 || c.Retention.MaxSize < 0 || c.Retention.MaxAge < 0 {
			t.Fatalf("accepted an invalid configuration: %+v", c)
		}
		for _, k := range Keys {
			if c.Sources[k] == "" {
				t.Fatalf("no source for %s", k)
			}
		}
	})
}
