package index

import (
	"bytes"
	"encoding/json"
	"testing"
)

var seedLines = []string{
	`{"v":1,"seq":1,"time":"2026-12-01T09:00:00Z","kind":"open","window":"toolu_01","tool":"Bash","label":"sed -i"}`,
	`{"v":1,"seq":2,"time":"2026-12-01T09:00:00Z","kind":"before","window":"toolu_01","path":"src/a.go","hash":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","size":3,"mtime":1764579600000000000,"mode":420,"type":"file"}`,
	`{"v":1,"seq":3,"time":"2026-12-01T09:00:00Z","kind":"after","window":"toolu_01","path":"new dir/ü.txt","hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}`,
	`{"v":1,"seq":4,"time":"2026-12-01T09:00:00Z","kind":"skip","window":"toolu_01","path":"big.bin","hash":null,"size":99999999,"mtime":0,"mode":420,"type":"file","reason":"over the size limit"}`,
	`{"v":1,"seq":5,"time":"2026-12-01T09:00:00Z","kind":"outside","path":"x","hash":null,"size":0,"mtime":0,"mode":493,"type":"dir","image":"after"}`,
	`{"v":1,"seq":6,"time":"2026-12-01T09:00:00Z","kind":"rewind","op":"r-1","target":2}`,
	`{"v":1,"seq":7,"time":"2026-12-01T09:00:00Z","kind":"close","window":"toolu_01"}`,
	`{"v":1,"seq":8,"time":"2026-12-01T09:00:00Z","kind":"after","window":"w","path":"dev/null","hash":null,"size":0,"mtime":5,"mode":438,"type":"chardev","rdev":259}`,
	`{"v":1,"seq":9,"time":"2026-12-01T09:00:00Z","kind":"after","window":"w","path":"pipe","hash":null,"size":0,"mtime":5,"mode":384,"type":"fifo"}`,
	`{"v":1,"seq":10,"time":"2026-12-01T09:00:00Z","kind":"close","window":"w","reason":"interrupted"}`,
	`{"v":1,"seq":11,"time":"2026-12-01T09:00:00Z","kind":"after","window":"w","path":"a","hash":null,"size":0,"mtime":0,"mode":0,"type":"absent","by":"guess"}`,
	`{"v":1,"seq":12,"time":"2026-12-01T09:00:00Z","kind":"before","window":"w","path":"e","hash":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","size":3,"mtime":5,"mode":420,"type":"file","owner":"0:0","ctime":1764579600000000000}`,
	`{"v":1,"seq":11,"time":"2026-12-01T09:00:00Z","kind":"after","window":"w","path":"a.txt","hash":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","size":3,"mtime":5,"mode":420,"type":"file","owner":"1000:1000","xattrs":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"}`,
	`{"v":2,"seq":1}`,
	`{"v":1,"seq":2,"time":"2026-12-01T09:00:00Z","kind":"after","window":"w","path":"../../etc/passwd","hash":null,"size":0,"mtime":0,"mode":0,"type":"absent"}`,
}

func FuzzParseRecord(f *testing.F) {
	for _, l := range seedLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseRecord(line)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("ParseRecord accepted an invalid record: %v", err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ParseRecord(b)
		if err != nil {
			t.Fatalf("re-encoded record %s does not parse: %v", b, err)
		}
		b2, _ := json.Marshal(r2)
		if !bytes.Equal(b, b2) {
			t.Fatalf("record does not round-trip:\n%s\n%s", b, b2)
		}
	})
}

func FuzzScan(f *testing.F) {
	var all bytes.Buffer
	for _, l := range seedLines[:12] {
		all.WriteString(l + "\n")
	}
	f.Add(all.Bytes())
	f.Add(all.Bytes()[:all.Len()-9])
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var last uint64
		Scan(bytes.NewReader(data), func(r *Record) error {
			if r.Seq <= last {
				t.Fatalf("Scan handed out seq %d after %d", r.Seq, last)
			}
			if err := ValidatePath(r.Path); r.IsImage() && err != nil {
				t.Fatalf("Scan handed out a bad path: %v", err)
			}
			last = r.Seq
			return nil
		})
	})
}

// Load (parallel) and Scan (streaming) agree on every input.
func FuzzLoadMatchesScan(f *testing.F) {
	var all bytes.Buffer
	for _, l := range seedLines[:12] {
		all.WriteString(l + "\n")
	}
	f.Add(all.Bytes())
	f.Add(all.Bytes()[:all.Len()-9])
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var scanned []Record
		serr := Scan(bytes.NewReader(data), func(r *Record) error { scanned = append(scanned, *r); return nil })
		loaded, tail, _ := parseAll(data, 0)
		if len(scanned) != len(loaded) {
			t.Fatalf("Scan read %d records, Load %d", len(scanned), len(loaded))
		}
		if (serr == nil) != (tail == nil) {
			t.Fatalf("Scan error %v, Load tail %v", serr, tail)
		}
		if tail != nil {
			le := serr.(*LineError)
			if le.Line != tail.Line || le.Torn != tail.Torn {
				t.Fatalf("Scan stopped at %+v, Load at %+v", le, tail)
			}
		}
	})
}

// The fast path and encoding/json agree on every line the fast path takes.
func FuzzFastParse(f *testing.F) {
	for _, l := range seedLines {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"v":1,"seq":01,"time":"2026-12-01T09:00:00Z","kind":"open","window":"w"}`))
	f.Add([]byte(`{"v":1,"seq":1,"time":"2026-12-01T09:00:00Z","kind":"open","window":"a\u003cb"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := fastParse(line)
		if !ok {
			return
		}
		var slow Record
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", line, err)
		}
		a, _ := json.Marshal(fast)
		b, _ := json.Marshal(&slow)
		if !bytes.Equal(a, b) || !fast.Time.Equal(slow.Time) {
			t.Fatalf("fast path and encoding/json differ on %q:\n%s\n%s", line, a, b)
		}
	})
}

// Every record the writer produces takes the fast path.
func TestWriterOutputTakesFastPath(t *testing.T) {
	for _, l := range seedLines[:12] {
		if _, ok := fastParse([]byte(l)); !ok && !bytes.Contains([]byte(l), []byte(`\u`)) {
			t.Errorf("fast path refused writer output %s", l)
		}
	}
}
