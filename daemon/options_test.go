package daemon

import (
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/google/go-cmp/cmp"
)

// What Spawn writes, the daemon reads back whole.
func TestOptionsRoundTrip(t *testing.T) {
	o := Options{Store: "/s/t \"q\"", Root: "/r", Mountpoint: "/m", AllowOther: true, Excludes: []string{"*.o", "build/"},
		MaxFileSize: 1 << 20, Retention: config.Retention{Keep: 7, MaxAge: 48 * time.Hour, MaxSize: 1 << 30, AutoGC: true}}
	got, err := ParseOptions(o.Arg())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(o, got); d != "" {
		t.Errorf("options changed on the way (-sent +read):\n%s", d)
	}
	for _, bad := range []string{"", "{}", `{"Root":"/r","Mountpoint":"/m","Store":"/s","Keep":3}`, o.Arg() + o.Arg(), "[1]"} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("ParseOptions(%q) accepted", bad)
		}
	}
}

// Whatever the argument, ParseOptions never panics, and what it accepts
// reads back the same from its own Arg.
func FuzzParseOptions(f *testing.F) {
	f.Add(Options{Store: "/s", Root: "/r", Mountpoint: "/m", Excludes: []string{"x"}}.Arg())
	f.Add(`{"Store":"/s","Root":"/r","Mountpoint":"/m","Retention":{"Keep":-1}}`)
	f.Fuzz(func(t *testing.T, arg string) {
		o, err := ParseOptions(arg)
		if err != nil {
			return
		}
		again, err := ParseOptions(o.Arg())
		if err != nil || !cmp.Equal(o, again) {
			t.Fatalf("%q: read back %+v, %v", arg, again, err)
		}
	})
}
