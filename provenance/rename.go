package provenance

import (
	"github.com/ckfs-dev/ckfs/index"
)

// maxRenames is how long a chain of renames Blame follows.
const maxRenames = 8

// renamedFrom finds the path v's window renamed to v's path, when the
// window recorded it: a file the window removed (its pre-image a file,
// its post-image absent) holding at least half of v's lines. It returns
// that file blamed as it was before the window; nil if there is none.
func (b *blamer) renamedFrom(v *version, text string) *fileVersion {
	if len(b.seen) >= maxRenames {
		return nil
	}
	b.seen[v.path] = true
	defer delete(b.seen, v.path)
	want := splitLines(text)
	var best *fileVersion
	bestCommon := 0
	for path, pre := range b.removedIn(v.window) {
		if b.seen[path] {
			continue
		}
		vs, err := b.versions(path, pre.Seq)
		if err != nil || len(vs) == 0 {
			continue
		}
		src, err := b.lines(vs)
		if err != nil {
			continue
		}
		if n := common(src.lines, want); n > bestCommon && 2*n >= len(want) {
			best, bestCommon = src, n
		}
	}
	return best
}

// removedIn returns the files window removed (a pre-image of a file, a
// post-image absent), each with its pre-image.
func (b *blamer) removedIn(window string) map[string]*index.Record {
	pre := map[string]*index.Record{}
	gone := map[string]*index.Record{}
	for i := range b.records {
		r := &b.records[i]
		if r.Window != window || !r.IsImage() {
			continue
		}
		switch {
		case r.Kind == index.KindBefore && r.State.Type == index.TypeFile:
			pre[r.Path] = r
		case r.Kind == index.KindAfter && r.State.Type == index.TypeAbsent && pre[r.Path] != nil:
			gone[r.Path] = pre[r.Path]
		}
	}
	return gone
}
