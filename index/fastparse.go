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
	var r Record
	if !fastParseInto(line, &r, nil) {
		return nil, false
	}
	return &r, true
}

// interner shares the strings that repeat from record to record (window
// ids, paths) within one parse.
type interner map[string]string

func (in interner) get(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// fastParseInto is fastParse into r; in may be nil.
func fastParseInto(line []byte, rp *Record, in interner) bool {
	p := fastParser{b: line, in: in}
	r := rp
	*r = Record{}
	if !p.header(r) {
		return false
	}
	var ok bool
	if p.lit(`,"window":`) {
		if r.Window, ok = p.str(); !ok {
			return false
		}
	}
	if p.lit(`,"path":`) {
		if r.Path, ok = p.str(); !ok {
			return false
		}
	}
	if p.lit(`,"hash":`) {
		if r.State, ok = p.state(); !ok {
			return false
		}
	}
	if !p.tail(r) {
		return false
	}
	return p.lit("}") && len(p.b) == 0
}

// header reads the fields every record opens with: v, seq, time, kind.
func (p *fastParser) header(r *Record) bool {
	if !p.lit(`{"v":`) {
		return false
	}
	v, ok := p.int()
	if !ok || v != Version {
		return false
	}
	r.V = int(v)
	if !p.lit(`,"seq":`) {
		return false
	}
	seq, ok := p.uint()
	if !ok {
		return false
	}
	r.Seq = seq
	if !p.lit(`,"time":`) {
		return false
	}
	ts, ok := p.str()
	if !ok {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return false
	}
	r.Time = t
	if !p.lit(`,"kind":`) {
		return false
	}
	k, ok := p.sym()
	if !ok {
		return false
	}
	r.Kind = Kind(k)
	return true
}

// state reads a state, from just after its "hash" key.
func (p *fastParser) state() (*State, bool) {
	var ok bool
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
	ty, ok := p.sym()
	if !ok {
		return nil, false
	}
	s.Type = FileType(ty)
	if p.lit(`,"rdev":`) {
		if s.Rdev, ok = p.uint(); !ok || s.Rdev == 0 {
			return nil, false
		}
	}
	if p.lit(`,"owner":`) {
		if s.Owner, ok = p.str(); !ok || s.Owner == "" {
			return nil, false
		}
	}
	if p.lit(`,"xattrs":`) {
		x, ok := p.str()
		if !ok || !validHash(x) {
			return nil, false
		}
		s.XAttrs = Hash(x)
	}
	return s, true
}

// tail reads the optional fields after the state.
func (p *fastParser) tail(r *Record) bool {
	var ok bool
	for _, f := range []struct {
		key string
		dst *string
	}{{`,"tool":`, &r.Tool}, {`,"label":`, &r.Label}, {`,"reason":`, &r.Reason}} {
		if p.lit(f.key) {
			if *f.dst, ok = p.str(); !ok {
				return false
			}
		}
	}
	if p.lit(`,"image":`) {
		im, ok := p.sym()
		if !ok {
			return false
		}
		r.Image = Image(im)
	}
	if p.lit(`,"found":`) {
		if r.Found, ok = p.sym(); !ok || r.Found == "" {
			return false
		}
	}
	if p.lit(`,"by":`) {
		if r.By, ok = p.str(); !ok || r.By == "" {
			return false
		}
	}
	if p.lit(`,"op":`) {
		if r.Op, ok = p.str(); !ok {
			return false
		}
	}
	if p.lit(`,"target":`) {
		tg, ok := p.uint()
		if !ok {
			return false
		}
		r.Target = &tg
	}
	if p.lit(`,"ctime":`) {
		if r.CTime, ok = p.int(); !ok || r.CTime == 0 {
			return false
		}
	}
	return true
}

type fastParser struct {
	b  []byte
	in interner
}

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
	return p.in.get(s), true
}

// symbol returns the constant for a value of the kind, type or image
// fields (most of a record's strings), with no lookup in the interner.
func symbol(b []byte) (string, bool) {
	switch string(b) {
	case "open":
		return "open", true
	case "close":
		return "close", true
	case "before":
		return "before", true
	case "after":
		return "after", true
	case "skip":
		return "skip", true
	case "outside":
		return "outside", true
	case "rewind":
		return "rewind", true
	case "watermark":
		return "watermark", true
	case "mount":
		return "mount", true
	case "file":
		return "file", true
	case "dir":
		return "dir", true
	case "symlink":
		return "symlink", true
	case "absent":
		return "absent", true
	}
	return "", false
}

// sym is str for a field whose values are few and known.
func (p *fastParser) sym() (string, bool) {
	if len(p.b) > 1 && p.b[0] == '"' {
		if end := bytes.IndexByte(p.b[1:], '"'); end > 0 {
			if s, ok := symbol(p.b[1 : 1+end]); ok {
				p.b = p.b[end+2:]
				return s, true
			}
		}
	}
	return p.str()
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
