package rewind

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ckfs-dev/ckfs/index"
)

func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(`{"v":1,"op":"r-1a2b","target":7,"root":"/src/app","created":"2026-12-01T00:00:00Z","paths":[{"path":"a.go","target":{"hash":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","size":3,"mtime":1,"mode":420,"type":"file"},"current":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}}]}`))
	f.Add([]byte(`{"v":1,"op":"r-1","target":0,"root":"/r","created":"2026-12-01T00:00:00Z","paths":[{"path":"../x","target":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"},"current":{"hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := ParseJournal(b)
		if err != nil {
			return
		}
		if !ValidOp(j.Op) || strings.ContainsAny(j.Op, "/\x00") {
			t.Fatalf("accepted op %q", j.Op)
		}
		for _, p := range j.Paths {
			if err := index.ValidatePath(p.Path); err != nil {
				t.Fatalf("accepted path %q", p.Path)
			}
		}
		out, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseJournal(out); err != nil {
			t.Fatalf("re-encoded journal does not parse: %v", err)
		}
	})
}
