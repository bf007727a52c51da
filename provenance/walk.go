package provenance

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ckfs-dev/ckfs/index"
)

// fileVersion is a version of the file already blamed: its lines, each
// with the index of its origin in blamer.origins.
type fileVersion struct {
	text    string
	lines   []string
	origins []int32
}

// maxRestoreSearch is how many earlier versions a rewind's lines are
// looked for in.
const maxRestoreSearch = 64

// result is the blamed last version as Lines.
func (b *blamer) result(fv *fileVersion) []Line {
	out := make([]Line, len(fv.lines))
	for i, l := range fv.lines {
		out[i] = Line{Text: l, Origin: b.origins[fv.origins[i]]}
	}
	return out
}

// lines blames vs in order: each version's lines carry the origins of the
// version before, its new lines are its own change's.
func (b *blamer) lines(vs []version) (*fileVersion, error) {
	var cur *fileVersion // the file as the last version left it; nil when absent
	barrier := false     // the version before was not stored
	var earlier []*fileVersion
	byHash := map[index.Hash]int{} // index in earlier
	pf := b.prefetch(vs)
	defer pf.close()
	for i := range vs {
		v := &vs[i]
		pf.wait(i)
		pf.done()
		last := i == len(vs)-1
		if v.state.Type != index.TypeFile {
			cur, barrier = nil, false
			continue
		}
		data, ok := b.load(v)
		if ok && IsBinary(data) && last {
			return nil, fmt.Errorf("%s: %w", v.path, ErrBinary)
		}
		if !ok || IsBinary(data) {
			cur, barrier = nil, true
			continue
		}
		cur = b.blameVersion(v, text(data), cur, barrier, earlier, byHash)
		barrier = false
		if v.state.Hash != "" {
			byHash[v.state.Hash] = len(earlier)
		}
		earlier = append(earlier, cur)
	}
	if cur == nil {
		if len(vs) > 0 && barrier {
			return nil, fmt.Errorf("%s: its content was not stored (%s)", vs[len(vs)-1].path, "ckfs log shows why")
		}
		return nil, fmt.Errorf("%s: %w", pathOf(vs), ErrNoFile)
	}
	return cur, nil
}

// prefetchAhead is how many versions past the one being blamed are read
// from the store at once; prefetchers is how many reads run at a time.
const prefetchAhead = 32

var prefetchers = runtime.GOMAXPROCS(0)

// prefetcher reads the content of versions from the store in the
// background, a few at a time and never more than prefetchAhead past the
// version being blamed.
type prefetcher struct {
	loaded []chan struct{} // closed when version i is read
	window chan struct{}   // a slot per version read and not yet blamed
	stop   chan struct{}
}

func (b *blamer) prefetch(vs []version) *prefetcher {
	p := &prefetcher{loaded: make([]chan struct{}, len(vs)), window: make(chan struct{}, prefetchAhead), stop: make(chan struct{})}
	for i := range p.loaded {
		p.loaded[i] = make(chan struct{})
	}
	go func() {
		workers := make(chan struct{}, prefetchers)
		for i := range vs {
			select {
			case p.window <- struct{}{}:
			case <-p.stop:
				return
			}
			workers <- struct{}{}
			go func() {
				if vs[i].state.Type == index.TypeFile {
					b.load(&vs[i])
				}
				<-workers
				close(p.loaded[i])
			}()
		}
	}()
	return p
}

// wait returns once version i is read; done frees its slot.
func (p *prefetcher) wait(i int) { <-p.loaded[i] }
func (p *prefetcher) done()      { <-p.window }

// close stops reading ahead (the blame is over).
func (p *prefetcher) close() { close(p.stop) }

// text is data as a string without a copy: content read from the store is
// never written to again.
func text(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	return unsafe.String(&data[0], len(data))
}

func pathOf(vs []version) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1].path
}

// origin adds o to the table of origins and returns its index.
func (b *blamer) origin(o Origin) int32 {
	b.origins = append(b.origins, o)
	return int32(len(b.origins) - 1)
}

// blameVersion gives the lines of v (text) their origins: from the
// version before (prev; a renamed path's source when v created the path),
// then, for a rewind's lines, from the earlier versions it restored, and
// otherwise v's own change.
func (b *blamer) blameVersion(v *version, text string, prev *fileVersion, barrier bool, earlier []*fileVersion, byHash map[index.Hash]int) *fileVersion {
	if prev == nil && v.by == ByWindow {
		prev = b.renamedFrom(v, text)
	}
	if prev == nil {
		prev = &fileVersion{}
	}
	out := &fileVersion{text: text, lines: splitLines(text)}
	out.origins = carry(prev, out.lines)
	if v.op {
		b.restored(out, v, earlier, byHash)
	}
	own := int32(-1)
	for j, o := range out.origins {
		if o >= 0 {
			continue
		}
		if own < 0 {
			by := v.by
			if barrier {
				by = ByUnknown
			}
			own = b.origin(Origin{By: by, Window: v.window, Seq: v.seq, Time: v.time, Path: v.path})
		}
		out.origins[j] = own
	}
	return out
}

// restored gives the lines a rewind or revert wrote (-1 in out.origins)
// the origin they had in the earlier version it brought back: the version
// with the same content, or else the newest earlier one the line diff
// finds them in.
func (b *blamer) restored(out *fileVersion, v *version, earlier []*fileVersion, byHash map[index.Hash]int) {
	mark := func(j int, o int32) {
		r, ok := b.restoredAs[restoreKey{o, v.window}]
		if !ok {
			c := b.origins[o]
			c.Restored = v.window
			r = b.origin(c)
			b.restoredAs[restoreKey{o, v.window}] = r
		}
		out.origins[j] = r
	}
	if k, ok := byHash[v.state.Hash]; ok && len(earlier[k].origins) == len(out.origins) {
		for j, o := range out.origins {
			if o < 0 {
				mark(j, earlier[k].origins[j])
			}
		}
		return
	}
	for k := len(earlier) - 1; k >= 0 && k >= len(earlier)-maxRestoreSearch; k-- {
		c := carry(earlier[k], out.lines)
		missing := false
		for j := range out.origins {
			if out.origins[j] < 0 && c[j] >= 0 {
				mark(j, c[j])
			}
			missing = missing || out.origins[j] < 0
		}
		if !missing {
			return
		}
	}
}

// restoreKey names an origin as a rewind brought it back.
type restoreKey struct {
	origin int32
	op     string
}
