package index

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// genTimeline is n records of windows editing a few hundred files in
// turn, the shape of the preview benchmark's timeline.
func genTimeline(n uint64) string {
	var sb strings.Builder
	seq := uint64(0)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h := "blake3:" + strings.Repeat("ab", 32)
	for w := 0; seq < n; w++ {
		rec := func(s string) {
			seq++
			fmt.Fprintf(&sb, `{"v":1,"seq":%d,"time":"%s",%s}`+"\n", seq, t0.Add(time.Duration(seq)*time.Millisecond).Format(time.RFC3339Nano), s)
		}
		rec(fmt.Sprintf(`"kind":"open","window":"toolu_%05d","tool":"Bash"`, w))
		for f := 0; f < 3; f++ {
			p := fmt.Sprintf("src/pkg%d/file%d.go", (w+f)%40, (w*7+f)%300)
			rec(fmt.Sprintf(`"kind":"before","window":"toolu_%05d","path":"%s","hash":"%s","size":100,"mtime":1764579000000000000,"mode":420,"type":"file"`, w, p, h))
			rec(fmt.Sprintf(`"kind":"after","window":"toolu_%05d","path":"%s","hash":"%s","size":120,"mtime":1764579000000000001,"mode":420,"type":"file"`, w, p, h))
		}
		rec(fmt.Sprintf(`"kind":"close","window":"toolu_%05d"`, w))
	}
	return sb.String()
}

// BenchmarkLoad reads a 100,000-record timeline: parsing the JSON (the
// cache removed before each load) and from the timeline cache, side by
// side.
func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), TimelineFile)
	if err := os.WriteFile(path, []byte(genTimeline(100000)), 0o644); err != nil {
		b.Fatal(err)
	}
	load := func(b *testing.B) {
		recs, tail, err := Load(path)
		if err != nil || tail != nil || len(recs) < 100000 {
			b.Fatalf("%d records, %v %v", len(recs), tail, err)
		}
	}
	b.Run("json", func(b *testing.B) {
		for range b.N {
			os.Remove(CachePath(path))
			load(b)
		}
	})
	b.Run("cached", func(b *testing.B) {
		load(b) // writes the cache
		b.ResetTimer()
		for range b.N {
			load(b)
		}
	})
}
