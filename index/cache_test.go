package index

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// loadJSON is Load without any cache: what the timeline itself says.
func loadJSON(t *testing.T, path string) ([]Record, *LineError) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, tail, err := parseAll(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs, tail
}

func sameLoad(t *testing.T, path, what string) []Record {
	t.Helper()
	want, wantTail := loadJSON(t, path)
	got, tail, err := Load(path)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: Load differs from the JSON (-json +load):\n%s", what, d)
	}
	if (tail == nil) != (wantTail == nil) || tail != nil && (tail.Line != wantTail.Line || tail.Offset != wantTail.Offset || tail.Torn != wantTail.Torn) {
		t.Fatalf("%s: tail %+v, the JSON's %+v", what, tail, wantTail)
	}
	return got
}

// The cache never changes what a load returns: written by a large load,
// used for the prefix it covers, extended after appends, and ignored when
// the timeline's prefix or the cache itself changed.
func TestCacheLoadsWhatTheJSONSays(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, TimelineFile)
	data := []byte(genTimeline(3 * cacheEvery))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sameLoad(t, path, "first load")
	cache, err := os.ReadFile(CachePath(path))
	if err != nil {
		t.Fatalf("a load of %d records wrote no cache: %v", 3*cacheEvery, err)
	}
	if recs, covered := readCache(CachePath(path), data); covered != len(data) || len(recs) != 3*cacheEvery {
		t.Fatalf("cache covers %d of %d bytes, %d records", covered, len(data), len(recs))
	}
	sameLoad(t, path, "from the cache")

	// Appended records (and a torn line) are parsed after the cache.
	more := genTimeline(3*cacheEvery + 40)[len(data):]
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(more + `{"v":1,"seq":99999`)
	f.Close()
	sameLoad(t, path, "cache plus appended records")

	// A changed byte in the covered prefix: the cache is not of this
	// timeline any more.
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte(`"size":100`))
	b[i+8] = '7' // size 170
	os.WriteFile(path, b, 0o600)
	sameLoad(t, path, "prefix changed")
	os.WriteFile(path, data, 0o600)

	// A damaged cache is ignored, whatever the damage.
	for _, damage := range []func([]byte) []byte{
		func(c []byte) []byte { c[len(c)/2] ^= 1; return c },
		func(c []byte) []byte { return c[:len(c)-3] },
		func(c []byte) []byte { return c[:10] },
		func(c []byte) []byte { c[len(cacheMagic)] = cacheVersion + 1; return c },
	} {
		os.WriteFile(CachePath(path), damage(bytes.Clone(cache)), 0o600)
		sameLoad(t, path, "damaged cache")
	}
}

// A record survives the cache's encoding unchanged, whatever its fields.
func TestCacheRoundTrip(t *testing.T) {
	str := rapid.SampledFrom([]string{"", "a", "toolu_01", "src/é.go", "x\ny", "blake3:" + string(bytes.Repeat([]byte("ab"), 32))})
	rapid.Check(t, func(rt *rapid.T) {
		recs := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) Record {
			r := Record{V: rapid.IntRange(0, 3).Draw(rt, "v"), Seq: rapid.Uint64().Draw(rt, "seq"),
				Time: time.Unix(0, rapid.Int64().Draw(rt, "time")).UTC(),
				Kind: Kind(str.Draw(rt, "kind")), Window: str.Draw(rt, "window"), Path: str.Draw(rt, "path"),
				Tool: str.Draw(rt, "tool"), Label: str.Draw(rt, "label"), Reason: str.Draw(rt, "reason"),
				Image: Image(str.Draw(rt, "image")), By: str.Draw(rt, "by"), Op: str.Draw(rt, "op")}
			if rapid.Bool().Draw(rt, "target") {
				v := rapid.Uint64().Draw(rt, "tv")
				r.Target = &v
			}
			r.CTime = rapid.Int64().Draw(rt, "ctime")
			if rapid.Bool().Draw(rt, "state") {
				r.State = &State{Hash: Hash(str.Draw(rt, "hash")), Size: rapid.Int64().Draw(rt, "size"), MTime: rapid.Int64().Draw(rt, "mtime"),
					Mode: rapid.Uint32().Draw(rt, "mode"), Type: FileType(str.Draw(rt, "type")), Rdev: rapid.Uint64().Draw(rt, "rdev"),
					Owner: str.Draw(rt, "owner"), XAttrs: Hash(str.Draw(rt, "xattrs"))}
			}
			return r
		}), 0, 20).Draw(rt, "recs")
		got, err := decodeRecords(encodeRecords(recs))
		if err != nil {
			rt.Fatal(err)
		}
		if len(recs) == 0 && len(got) == 0 {
			return
		}
		if d := cmp.Diff(recs, got); d != "" {
			rt.Fatalf("(-in +out):\n%s", d)
		}
	})
}

// Any bytes decode to records or to an error, never a panic.
func FuzzCacheDecode(f *testing.F) {
	f.Add(encodeRecords(nil))
	recs, _, _ := parseAll([]byte(genTimeline(12)), 0)
	f.Add(encodeRecords(recs))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeRecords(b)
	})
}

// The cache encodes every field of a record: a field added to Record or
// State must be added to the encoding, with cacheVersion raised, or old
// caches would load records without it.
func TestCacheCoversEveryField(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, rt.Field(i).Name)
		}
		return out
	}
	if got, want := fields(Record{}), []string{"V", "Seq", "Time", "Kind", "Window", "Path", "State", "Tool", "Label", "Reason", "Image", "Found", "By", "Op", "Target", "CTime"}; !slices.Equal(got, want) {
		t.Errorf("Record has fields %v; the cache encodes %v: encode the new ones in encodeRecords and decodeRecords and raise cacheVersion", got, want)
	}
	if got, want := fields(State{}), []string{"Hash", "Size", "MTime", "Mode", "Type", "Rdev", "Owner", "XAttrs"}; !slices.Equal(got, want) {
		t.Errorf("State has fields %v; the cache encodes %v: encode the new ones in encodeRecords and decodeRecords and raise cacheVersion", got, want)
	}
}

// A cache holding a record this ckfs would refuse (a kind from a newer
// one) is not used: the load parses the JSON instead.
func TestCacheRefusesWhatTheJSONWould(t *testing.T) {
	path := filepath.Join(t.TempDir(), TimelineFile)
	data := []byte(genTimeline(2 * cacheEvery))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	recs, _ := loadJSON(t, path)
	recs[len(recs)/2].Kind = "from-the-future"
	writeCache(CachePath(path), data, len(data), recs)
	if got, covered := readCache(CachePath(path), data); got != nil || covered != 0 {
		t.Fatalf("a cache with an unknown record kind was used (%d records)", len(got))
	}
	sameLoad(t, path, "cache with a record this ckfs refuses")
}
