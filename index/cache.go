package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"
)

// The timeline cache (docs/format.md, section 5) holds the parsed records
// of a prefix of the timeline in a binary form that decodes several times
// faster than the JSON. It is derived data: it is used only when the BLAKE3
// hash of the timeline prefix it names matches the file, and only when its
// own checksum matches; any mismatch, damage or version change means it is
// ignored (and rewritten), never that a record is trusted from it.

const (
	cacheMagic = "ckfs-timeline-cache\n"
	// cacheVersion changes whenever the encoding, Record, or what
	// Record.Validate accepts changes: cached records were validated by
	// the ckfs that wrote them.
	cacheVersion = 4
	// cacheEvery is how many records beyond the cache a load must parse
	// before it writes a new cache.
	cacheEvery  = 4096
	cacheHeader = len(cacheMagic) + 1 + 8 + 32 + 32
	// cacheMinFree is the free space under which no cache is written.
	cacheMinFree = 256 << 20
)

// CachePath is where the cache of the timeline at path lives.
func CachePath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".cache"
}

// readCache returns the records the cache at cpath holds for a prefix of
// data, and that prefix's length; nil and 0 if the cache is missing,
// damaged, of another version, or not of this timeline.
func readCache(cpath string, data []byte) ([]Record, int) {
	b, err := os.ReadFile(cpath)
	if err != nil || len(b) < cacheHeader || string(b[:len(cacheMagic)]) != cacheMagic || b[len(cacheMagic)] != cacheVersion {
		return nil, 0
	}
	h := b[len(cacheMagic)+1:]
	covered := binary.LittleEndian.Uint64(h)
	prefixSum, bodySum, body := h[8:40], h[40:72], b[cacheHeader:]
	if covered == 0 || covered > uint64(len(data)) || data[covered-1] != '\n' {
		return nil, 0
	}
	if s := blake3.Sum256(body); !bytes.Equal(s[:], bodySum) {
		return nil, 0
	}
	if s := blake3.Sum256(data[:covered]); !bytes.Equal(s[:], prefixSum) {
		return nil, 0
	}
	recs, err := decodeRecords(body)
	if err != nil {
		return nil, 0
	}
	// What this ckfs would refuse in the JSON (a kind it does not know,
	// written by a newer one) it refuses from the cache too: the load then
	// parses the JSON, and stops where it always did.
	checked := map[string]bool{}
	validPath := func(p string) error {
		if checked[p] {
			return nil
		}
		if err := ValidatePath(p); err != nil {
			return err
		}
		checked[p] = true
		return nil
	}
	for i := range recs {
		if recs[i].validate(validPath) != nil {
			return nil, 0
		}
	}
	return recs, int(covered)
}

// writeCache replaces the cache at cpath with recs, the records of
// data[:covered]. It is a cache: a failure leaves the old one or none,
// and is not reported; nothing is synced.
func writeCache(cpath string, data []byte, covered int, recs []Record) {
	// The store's disk is for the timeline and the objects first: no
	// cache where it could take the room a record needs.
	var st unix.Statfs_t
	if unix.Statfs(filepath.Dir(cpath), &st) != nil || int64(st.Bavail)*int64(st.Bsize) < cacheMinFree {
		return
	}
	body := encodeRecords(recs)
	out := make([]byte, 0, cacheHeader+len(body))
	out = append(out, cacheMagic...)
	out = append(out, cacheVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(covered))
	ps, bs := blake3.Sum256(data[:covered]), blake3.Sum256(body)
	out = append(append(append(out, ps[:]...), bs[:]...), body...)
	// The store's tmp/ (where ckfs verify finds what a crash left) when
	// there is one.
	dir := filepath.Join(filepath.Dir(cpath), "tmp")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(cpath)
	}
	f, err := os.CreateTemp(dir, "timeline-cache-*")
	if err != nil {
		return
	}
	_, werr := f.Write(out)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), cpath) != nil {
		os.Remove(f.Name())
	}
}

// encodeRecords writes recs as a string table (every distinct string
// once) followed by the records, whose strings are indexes into it.
func encodeRecords(recs []Record) []byte {
	ids := make(map[string]uint64, len(recs))
	ids[""] = 0
	var strs []byte
	rb := make([]byte, 0, 24*len(recs))
	// Most fields repeat the previous record's: those skip the map.
	var lastS [14]string
	var lastID [14]uint64
	slot := 0
	str := func(s string) {
		k := slot % len(lastS)
		slot++
		if s == lastS[k] {
			rb = binary.AppendUvarint(rb, lastID[k])
			return
		}
		id, ok := ids[s]
		if !ok {
			id = uint64(len(ids))
			ids[s] = id
			strs = binary.AppendUvarint(strs, uint64(len(s)))
			strs = append(strs, s...)
		}
		lastS[k], lastID[k] = s, id
		rb = binary.AppendUvarint(rb, id)
	}
	for i := range recs {
		r := &recs[i]
		slot = 0
		rb = binary.AppendUvarint(rb, uint64(r.V))
		rb = binary.AppendUvarint(rb, r.Seq)
		rb = binary.AppendVarint(rb, r.Time.UnixNano())
		for _, s := range []string{string(r.Kind), r.Window, r.Path, r.Tool, r.Label, r.Reason, string(r.Image), r.Found, r.By, r.Op} {
			str(s)
		}
		if r.Target == nil {
			rb = append(rb, 0)
		} else {
			rb = append(rb, 1)
			rb = binary.AppendUvarint(rb, *r.Target)
		}
		rb = binary.AppendVarint(rb, r.CTime)
		if s := r.State; s == nil {
			rb = append(rb, 0)
		} else {
			rb = append(rb, 1)
			str(string(s.Hash))
			rb = binary.AppendVarint(rb, s.Size)
			rb = binary.AppendVarint(rb, s.MTime)
			rb = binary.AppendUvarint(rb, uint64(s.Mode))
			str(string(s.Type))
			rb = binary.AppendUvarint(rb, s.Rdev)
			str(s.Owner)
			str(string(s.XAttrs))
		}
	}
	out := binary.AppendUvarint(nil, uint64(len(ids)-1))
	out = binary.AppendUvarint(out, uint64(len(recs)))
	out = binary.AppendUvarint(out, uint64(len(strs)))
	return append(append(out, strs...), rb...)
}

var errCache = errors.New("damaged timeline cache")

// cacheReader decodes what encodeRecords wrote; any inconsistency is
// errCache.
type cacheReader struct {
	b   []byte
	err error
}

func (c *cacheReader) uvarint() uint64 {
	v, n := binary.Uvarint(c.b)
	if n <= 0 {
		c.err, c.b = errCache, nil
		return 0
	}
	c.b = c.b[n:]
	return v
}

// varint undoes binary.AppendVarint's zig-zag encoding.
func (c *cacheReader) varint() int64 {
	u := c.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (c *cacheReader) byte() byte {
	if len(c.b) == 0 {
		c.err = errCache
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return v
}

func decodeRecords(b []byte) ([]Record, error) {
	c := &cacheReader{b: b}
	nstr, nrec, slen := c.uvarint(), c.uvarint(), c.uvarint()
	if c.err != nil || slen > uint64(len(c.b)) || nstr > slen || nrec > uint64(len(c.b)) {
		return nil, errCache
	}
	// One string holds every table entry: the records' strings share it.
	raw := c.b[:slen]
	all := string(raw)
	c.b = c.b[slen:]
	table := make([]string, 1, nstr+1)
	for off := 0; off < len(raw); {
		n, k := binary.Uvarint(raw[off:])
		if k <= 0 || uint64(len(raw)-off-k) < n {
			return nil, errCache
		}
		table = append(table, all[off+k:off+k+int(n)])
		off += k + int(n)
	}
	if uint64(len(table)-1) != nstr {
		return nil, errCache
	}
	str := func() string {
		id := c.uvarint()
		if id >= uint64(len(table)) {
			c.err = errCache
			return ""
		}
		return table[id]
	}
	recs := make([]Record, nrec)
	var states []State
	for i := range recs {
		r := &recs[i]
		r.V, r.Seq = int(c.uvarint()), c.uvarint()
		r.Time = time.Unix(0, c.varint()).UTC()
		r.Kind, r.Window, r.Path, r.Tool, r.Label = Kind(str()), str(), str(), str(), str()
		r.Reason, r.Image, r.Found, r.By, r.Op = str(), Image(str()), str(), str(), str()
		if c.byte() == 1 {
			t := c.uvarint()
			r.Target = &t
		}
		r.CTime = c.varint()
		if c.byte() == 1 {
			if len(states) == 0 {
				states = make([]State, min(1024, len(recs)-i))
			}
			s := &states[0]
			states = states[1:]
			s.Hash = Hash(str())
			s.Size, s.MTime = c.varint(), c.varint()
			s.Mode = uint32(c.uvarint())
			s.Type, s.Rdev, s.Owner, s.XAttrs = FileType(str()), c.uvarint(), str(), Hash(str())
			r.State = s
		}
		if c.err != nil {
			return nil, c.err
		}
	}
	if len(c.b) != 0 {
		return nil, errCache
	}
	return recs, nil
}
