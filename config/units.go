package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/ckfs-dev/ckfs/internal/english"
)

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// ParseSize reads a size: a number of bytes with an optional unit (B, K,
// KiB, KB, M, MiB, MB, G, GiB, GB, T, TiB, TB; the single letters are
// binary). "0" means no limit where a limit is asked for.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || t == "" {
		return 0, fmt.Errorf("bad size %q: want a number of bytes with an optional unit, such as 512MiB or 10G", s)
	}
	if f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(f * float64(mult)), nil
}

// FormatSize renders n bytes for people; 0 is "none".
func FormatSize(n int64) string {
	if n == 0 {
		return "none"
	}
	return english.Size(n)
}

// ParseDuration reads a Go duration with two more units, d (24h) and w
// (7d): "30d", "2w", "36h", "1d12h".
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var total time.Duration
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}} {
		if i := strings.Index(t, u.suffix); i > 0 {
			n, err := strconv.Atoi(t[:i])
			if err != nil || n < 0 {
				return 0, fmt.Errorf("bad duration %q: want a duration such as 30d, 2w or 12h", s)
			}
			total += time.Duration(n) * u.d
			t = t[i+1:]
		}
	}
	if t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("bad duration %q: want a duration such as 30d, 2w or 12h", s)
		}
		total += d
	}
	if strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("empty duration: want a duration such as 30d, 2w or 12h")
	}
	return total, nil
}

// FormatDuration renders d for people, in days when whole; 0 is "none".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// keyLine finds the line on which key is set (or its table is opened) in
// TOML data; 0 if it cannot tell. The TOML library reports unknown keys
// without their position, so this follows table headers line by line.
func keyLine(data []byte, key toml.Key) int {
	want := key.String()
	var table toml.Key
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '[' {
			inner := strings.Trim(t, "[]")
			if j := strings.Index(t, "]"); j > 0 {
				inner = strings.Trim(t[:j], "[")
			}
			table = splitKey(inner)
			if table.String() == want {
				return i + 1
			}
			continue
		}
		if j := strings.IndexByte(t, '='); j > 0 {
			full := append(append(toml.Key{}, table...), splitKey(t[:j])...)
			if full.String() == want || strings.HasPrefix(want, full.String()+".") {
				return i + 1
			}
		}
	}
	return 0
}

// splitKey splits a dotted TOML key, honouring quotes.
func splitKey(s string) toml.Key {
	var k toml.Key
	var cur strings.Builder
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			k = append(k, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(k, strings.TrimSpace(cur.String()))
}
