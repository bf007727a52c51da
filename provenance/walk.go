package provenance

import (
	"fmt"

	"github.com/ckfs-dev/ckfs/index"
)

// fileVersion is a version of the file already blamed.
type fileVersion struct {
	lines []Line
	text  string
}

// maxRestoreSearch is how many earlier versions a rewind's lines are
// looked for in.
const maxRestoreSearch = 64

// lines blames vs in order: each version's lines carry the origins of the
// version before, its new lines are its own change's.
func (b *blamer) lines(vs []version) ([]Line, error) {
	var cur *fileVersion // the file as the last version left it; nil when absent
	barrier := false     // the version before was not stored
	var earlier []fileVersion
	byHash := map[index.Hash]int{} // index in earlier
	for i := range vs {
		v := &vs[i]
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
		fv := b.blameVersion(v, string(data), cur, barrier, earlier, byHash)
		cur, barrier = &fv, false
		if v.state.Hash != "" {
			byHash[v.state.Hash] = len(earlier)
		}
		earlier = append(earlier, fv)
	}
	if cur == nil {
		if len(vs) > 0 && barrier {
			return nil, fmt.Errorf("%s: its content was not stored (%s)", vs[len(vs)-1].path, "ckfs log shows why")
		}
		return nil, fmt.Errorf("%s: %w", pathOf(vs), ErrNoFile)
	}
	return cur.lines, nil
}

func pathOf(vs []version) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1].path
}

// blameVersion gives the lines of v (text) their origins: from the
// version before (prev; a renamed path's source when v created the path),
// then, for a rewind's lines, from the earlier versions it restored, and
// otherwise v's own change.
func (b *blamer) blameVersion(v *version, text string, prev *fileVersion, barrier bool, earlier []fileVersion, byHash map[index.Hash]int) fileVersion {
	own := Origin{By: v.by, Window: v.window, Seq: v.seq, Time: v.time, Path: v.path}
	if barrier {
		own.By = ByUnknown
	}
	if prev == nil && v.by == ByWindow {
		prev = b.renamedFrom(v, text)
	}
	from := fileVersion{}
	if prev != nil {
		from = *prev
	}
	got := carry(from.lines, from.text, text)
	if v.op {
		b.restored(got, v, text, earlier, byHash)
	}
	out := fileVersion{text: text, lines: make([]Line, len(got))}
	for j, l := range splitLines(text) {
		o := own
		if got[j] != nil {
			o = *got[j]
		}
		out.lines[j] = Line{Text: l, Origin: o}
	}
	return out
}

// restored gives the lines a rewind or revert wrote (nil in got) the
// origin they had in the earlier version it brought back: the version
// with the same content, or else the newest earlier one the line diff
// finds them in.
func (b *blamer) restored(got []*Origin, v *version, text string, earlier []fileVersion, byHash map[index.Hash]int) {
	mark := func(j int, o Origin) {
		o.Restored = v.window
		got[j] = &o
	}
	if k, ok := byHash[v.state.Hash]; ok && len(earlier[k].lines) == len(got) {
		for j := range got {
			if got[j] == nil {
				mark(j, earlier[k].lines[j].Origin)
			}
		}
		return
	}
	for k := len(earlier) - 1; k >= 0 && k >= len(earlier)-maxRestoreSearch; k-- {
		c := carry(earlier[k].lines, earlier[k].text, text)
		missing := false
		for j := range got {
			if got[j] == nil && c[j] != nil {
				mark(j, *c[j])
			}
			missing = missing || got[j] == nil
		}
		if !missing {
			return
		}
	}
}
