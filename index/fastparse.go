package index

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"
)

// fastParse decodes a record line in the exact form the Writer produces
// (encoding/json's output for Record: fixed key order, no spaces, strings
// without escapes). It returns false for anything else, and the caller
// falls back to encoding/json: a timeline of a million records loads in a
// fraction of the time, and FuzzFastParse holds the two to the same
// result.
func fastParse(line []byte) (*Record, bool) {
	p := fastParser{b: line}
	var r Record
	if !p.lit(`{"v":`) {
		return nil, false
	}
	v, ok := p.int()
	if !ok || v != Version {
		return nil, false
	}
	r.V = int(v)
	if !p.lit(`,"seq":`) {
		return nil, false
	}
	seq, ok := p.uint()
	if !ok {
		return nil, false
	}
	r.Seq = seq
	if !p.lit(`,"time":`) {
		return nil, false
	}
	ts, ok := p.str()
	if !ok {
		return nil, false
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return nil, false
	}
	r.Time = t
	if !p.lit(`,"kind":`) {
		return nil, false
	}
	k, ok := p.str()
	if !ok {
		return nil, false
	}
	r.Kind = Kind(k)
	if p.lit(`,"window":`) {
		if r.Window, ok = p.str(); !ok {
			return nil, false
		}
	}
	if p.lit(`,"path":`) {
		if r.Path, ok = p.str(); !ok {
			return nil, false
		}
	}
	if p.lit(`,"hash":`) {
		s := &State{}
		if !p.lit("null") {
			h, ok := p.str()
			if !ok || !validHash(h) {
				return nil, false
			}
			s.Hash = Hash(h)
		}
		if !p.lit(`,"size":`) {
			return nil, false
		}
		if s.Size, ok = p.int(); !ok {
			return nil, false
		}
		if !p.lit(`,"mtime":`) {
			return nil, false
		}
		if s.MTime, ok = p.int(); !ok {
			return nil, false
		}
		if !p.lit(`,"mode":`) {
			return nil, false
		}
		m, ok := p.uint()
		if !ok || m > 1<<32-1 {
			return nil, false
		}
		s.Mode = uint32(m)
		if !p.lit(`,"type":`) {
			return nil, false
		}
		ty, ok := p.str()
		if !ok {
			return nil, false
		}
		s.Type = FileType(ty)
		r.State = s
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{`,"tool":`, &r.Tool}, {`,"label":`, &r.Label}, {`,"reason":`, &r.Reason}} {
		if p.lit(f.key) {
			if *f.dst, ok = p.str(); !ok {
				return nil, false
			}
		}
	}
	if p.lit(`,"image":`) {
		im, ok := p.str()
		if !ok {
			return nil, false
		}
		r.Image = Image(im)
	}
	if p.lit(`,"op":`) {
		if r.Op, ok = p.str(); !ok {
			return nil, false
		}
	}
	if p.lit(`,"target":`) {
		tg, ok := p.uint()
		if !ok {
			return nil, false
		}
		r.Target = &tg
	}
	if !p.lit("}") || len(p.b) != 0 {
		return nil, false
	}
	return &r, true
}

type fastParser struct{ b []byte }

func (p *fastParser) lit(s string) bool {
	if len(p.b) >= len(s) && string(p.b[:len(s)]) == s {
		p.b = p.b[len(s):]
		return true
	}
	return false
}

// str reads a JSON string without escapes or control characters.
func (p *fastParser) str() (string, bool) {
	if len(p.b) == 0 || p.b[0] != '"' {
		return "", false
	}
	end := bytes.IndexByte(p.b[1:], '"')
	if end < 0 {
		return "", false
	}
	s := p.b[1 : 1+end]
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(s) {
		return "", false // encoding/json would replace the bad bytes
	}
	p.b = p.b[end+2:]
	return string(s), true
}

// digits reads an optional minus sign and digits as JSON writes integers.
func (p *fastParser) digits() ([]byte, bool) {
	i := 0
	if i < len(p.b) && p.b[i] == '-' {
		i++
	}
	start := i
	for i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9' {
		i++
	}
	if i == start || (p.b[start] == '0' && i > start+1) {
		return nil, false
	}
	d := p.b[:i]
	p.b = p.b[i:]
	return d, true
}

func (p *fastParser) int() (int64, bool) {
	d, ok := p.digits()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(d), 10, 64)
	return n, err == nil
}

func (p *fastParser) uint() (uint64, bool) {
	d, ok := p.digits()
	if !ok || d[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d), 10, 64)
	return n, err == nil
}
