package rewind

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/english"
)

// Conflict is a path a revert cannot take a window's change out of
// without losing a later change.
type Conflict struct {
	Path   string `json:"path"`
	Window string `json:"window"`
	Reason string `json:"reason"`
	Hunks  []Hunk `json:"hunks,omitempty"`  // for a text merge
	Marked bool   `json:"marked,omitempty"` // written with conflict markers
	// Skipped: left as it is (SkipConflicts), with every window's change
	// to it.
	Skipped bool `json:"skipped,omitempty"`
}

// revertPlan plans taking the changes of the windows ids out of the
// workspace while keeping everything done since, newest window first. Per
// path: the window's first image there is what it found (before), its last
// what it left (window), the disk (or the previous window's result) is now.
// Now equal to window: back to before. Now equal to before: nothing. Text
// files on all three sides: a three-way merge (revertMerge); merged
// content is stored so the plan can write it. Anything else that changed
// since is a conflict.
func revertPlan(records []index.Record, ids []string, disk *Dir, store cas.Store, markers bool) (*Plan, []Conflict, error) {
	chosen, err := chooseWindows(records, ids)
	if err != nil {
		return nil, nil, err
	}
	rv := &reverter{p: &Plan{}, disk: disk, store: store, markers: markers,
		disk0: map[string]index.State{}, now: map[string]index.State{}, content: map[string][]byte{}}
	for _, w := range chosen {
		first, last, skipped, paths := windowImages(records, w.ID)
		for _, path := range paths {
			if skipped[path] {
				rv.p.CannotRestore = append(rv.p.CannotRestore, Unrestorable{Path: path, Reason: "window " + w.ID + " changed it without its content being stored"})
				continue
			}
			if err := rv.takeOut(w.ID, path, first[path], last[path]); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, path := range slices.Sorted(maps.Keys(rv.now)) {
		if acts := actions(rv.disk0[path], rv.now[path]); len(acts) > 0 {
			rv.p.Steps = append(rv.p.Steps, Step{Path: path, Actions: acts, Current: rv.disk0[path], Target: rv.now[path]})
		}
	}
	return rv.p, rv.conflicts, nil
}

// chooseWindows returns the closed windows named by ids, once each,
// newest first.
func chooseWindows(records []index.Record, ids []string) ([]index.Window, error) {
	wins := map[string]index.Window{}
	for _, w := range index.Windows(records) {
		wins[w.ID] = w
	}
	var chosen []index.Window
	for _, id := range ids {
		w, ok := wins[id]
		switch {
		case !ok:
			return nil, fmt.Errorf("no window %q in the timeline (ckfs log lists them)", id)
		case w.Close == nil:
			return nil, fmt.Errorf("window %q is still open: close it first (ckfs window close %s)", id, id)
		}
		if !slices.ContainsFunc(chosen, func(c index.Window) bool { return c.ID == id }) {
			chosen = append(chosen, w)
		}
	}
	slices.SortFunc(chosen, func(a, b index.Window) int { return int(b.Open.Seq) - int(a.Open.Seq) })
	return chosen, nil
}

// windowImages returns, for every path the window id recorded, its first
// and last image in the window and whether its content went unstored; and
// the paths, sorted.
func windowImages(records []index.Record, id string) (first, last map[string]index.State, skipped map[string]bool, paths []string) {
	first, last, skipped = map[string]index.State{}, map[string]index.State{}, map[string]bool{}
	for i := range records {
		r := &records[i]
		if r.Window != id || !r.IsImage() {
			continue
		}
		if _, ok := first[r.Path]; !ok {
			first[r.Path] = *r.State
			paths = append(paths, r.Path)
		}
		last[r.Path] = *r.State
		if r.Kind == index.KindSkip {
			skipped[r.Path] = true
		}
	}
	slices.Sort(paths)
	return first, last, skipped, paths
}

// reverter takes windows out of the disk's state, one path at a time.
type reverter struct {
	p         *Plan
	disk      *Dir
	store     cas.Store
	markers   bool
	disk0     map[string]index.State // the disk, read once per path
	now       map[string]index.State // the result so far
	content   map[string][]byte      // its content, for files merged or read
	conflicts []Conflict
}

// takeOut takes window w's change of path, from before to after, out of
// the result so far: at once where the path is as w left it, by a merge
// where it changed since, or as a conflict.
func (rv *reverter) takeOut(w, path string, before, after index.State) error {
	if before.SameContent(after) {
		// The window changed nothing here (a pre-image taken ahead, or
		// a file opened for writing and left as it was): the disk need
		// not be read.
		return nil
	}
	cur, ok := rv.now[path]
	if !ok {
		st, err := rv.disk.State(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", index.Display(path), err)
		}
		rv.disk0[path], rv.now[path], cur = st, st, st
	}
	switch {
	case cur.SameContent(before):
		return nil // already as before the window
	case cur.SameContent(after):
		rv.now[path] = before
		delete(rv.content, path)
		return nil
	}
	if cur.Type != index.TypeFile || before.Type != index.TypeFile || after.Type != index.TypeFile {
		reason := fmt.Sprintf("the window left it %s, and it is %s now", describe(after), describe(cur))
		switch {
		case before.Type == index.TypeAbsent:
			reason = "the window created it, and it changed since: taking the creation out would delete that change"
		case after.Type == index.TypeAbsent:
			reason = "the window deleted it, and it was made again since"
		}
		rv.conflicts = append(rv.conflicts, Conflict{Path: path, Window: w, Reason: reason})
		return nil
	}
	merged, hunks, err := mergeFile(path, cur, before, after, rv.content[path], rv.disk, rv.store, rv.markers, "window "+w)
	if err != nil {
		return err
	}
	if merged == nil { // binary
		rv.conflicts = append(rv.conflicts, Conflict{Path: path, Window: w, Reason: "binary content changed since the window: it cannot be merged"})
		return nil
	}
	if len(hunks) > 0 {
		rv.conflicts = append(rv.conflicts, Conflict{Path: path, Window: w, Reason: fmt.Sprintf("%d %s changed both by the window and since", len(hunks), english.Noun(len(hunks), "place", "places")), Hunks: hunks, Marked: rv.markers})
		if !rv.markers {
			return nil
		}
	}
	h, _, err := rv.store.Put(merged)
	if err != nil {
		return fmt.Errorf("store the merged %s: %w", index.Display(path), err)
	}
	next := cur
	next.Hash, next.Size = h, int64(len(merged))
	if cur.Mode == after.Mode {
		next.Mode = before.Mode // the window's chmod is taken out too
	}
	rv.now[path], rv.content[path] = next, merged
	return nil
}

// mergeFile reads the three sides of a text file and merges them; nil
// content means one side is binary. have is the current content when an
// earlier window of the same revert produced it.
func mergeFile(path string, cur, before, after index.State, have []byte, disk *Dir, store cas.Store, markers bool, label string) ([]byte, []Hunk, error) {
	now := have
	if now == nil {
		var err error
		if now, err = disk.Content(path); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", index.Display(path), err)
		}
	}
	get := func(s index.State) ([]byte, error) {
		h := s.Hash
		b, err := store.Get(h)
		if err != nil {
			return nil, fmt.Errorf("read the recorded content of %s: %w", index.Display(path), err)
		}
		return b, nil
	}
	b, err := get(before)
	if err != nil {
		return nil, nil, err
	}
	w, err := get(after)
	if err != nil {
		return nil, nil, err
	}
	if binary(now) || binary(b) || binary(w) {
		return nil, nil, nil
	}
	merged, hunks := revertMerge(now, b, w, markers, label)
	return merged, hunks, nil
}

// conflictCheck is the check a revert with conflicts fails (unless they
// were written with markers, which it then lists as a warning).
func conflictCheck(conflicts []Conflict, markers, skip bool) Check {
	var paths []string
	for _, c := range conflicts {
		paths = append(paths, fmt.Sprintf("%s (window %s: %s)", index.Display(c.Path), c.Window, c.Reason))
	}
	ok := len(conflicts) == 0 || skip || (markers && !slices.ContainsFunc(conflicts, func(c Conflict) bool { return !c.Marked }))
	detail := "every change of the windows comes out cleanly"
	switch {
	case len(conflicts) > 0 && skip:
		detail = "these are left as they are, with the windows' changes in them (--conflict=skip): revert them by hand if you want them back"
	case len(conflicts) > 0 && ok:
		detail = "conflicting places are written with markers (<<<<<<< now … >>>>>>> before): edit them, then check with ckfs diff"
	case len(conflicts) > 0 && markers:
		detail = "these cannot be marked (not text, or deleted or created and changed since): revert them by hand, or leave out their windows"
	case len(conflicts) > 0:
		detail = "these changed since where the windows changed them: rerun with --conflict=markers to write both sides into text files, --conflict=skip to revert everything else, leave them out (--exclude PATH), or resolve them by hand"
	}
	return Check{Name: "conflicts", OK: ok, Warn: len(conflicts) > 0, Paths: paths, Detail: detail}
}

// matchPaths keeps the steps and unrestorable paths that lie at or under
// one of the patterns (index.MatchPaths), or, with exclude, those that do
// not.
func (p *Plan) matchPaths(patterns []string, exclude bool) error {
	match, err := index.MatchPaths(patterns)
	if err != nil {
		return err
	}
	drop := func(path string) bool { return match(path) == exclude }
	p.Steps = slices.DeleteFunc(p.Steps, func(s Step) bool { return drop(s.Path) })
	p.Conflicts = slices.DeleteFunc(p.Conflicts, func(c Conflict) bool { return drop(c.Path) })
	p.CannotRestore = slices.DeleteFunc(p.CannotRestore, func(u Unrestorable) bool { return drop(u.Path) })
	return nil
}

// skipConflicts leaves every path with a conflict as it is: its steps
// (another window's clean change to it) are dropped too, so a path is
// either reverted for every window or not touched.
func (p *Plan) skipConflicts() {
	conflicted := map[string]bool{}
	for i := range p.Conflicts {
		p.Conflicts[i].Skipped, p.Conflicts[i].Marked = true, false
		conflicted[p.Conflicts[i].Path] = true
	}
	p.Steps = slices.DeleteFunc(p.Steps, func(s Step) bool { return conflicted[s.Path] })
}
