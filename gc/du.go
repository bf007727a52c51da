package gc

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// Usage is what a store holds and what it saves.
type Usage struct {
	Store         string `json:"store"`
	Objects       int    `json:"objects"`
	StoredBytes   int64  `json:"stored_bytes"`   // object files on disk
	ContentBytes  int64  `json:"content_bytes"`  // their content, uncompressed
	TimelineBytes int64  `json:"timeline_bytes"` // snapshots.jsonl
	Records       int    `json:"records"`
	// FullCopyBytes is what a checkpoint store that keeps a full copy of
	// a file at every image would hold: the content size of every record
	// that names content.
	FullCopyBytes int64 `json:"full_copy_bytes"`
	// CompressionRatio is ContentBytes / StoredBytes; DedupRatio is
	// FullCopyBytes / ContentBytes; SavingRatio is FullCopyBytes /
	// (StoredBytes + TimelineBytes).
	CompressionRatio float64       `json:"compression_ratio"`
	DedupRatio       float64       `json:"dedup_ratio"`
	SavingRatio      float64       `json:"saving_ratio"`
	Watermark        uint64        `json:"watermark,omitempty"`
	Windows          []WindowUsage `json:"windows"`            // largest first
	Sessions         []WindowUsage `json:"sessions,omitempty"` // per agent session, largest first
	Files            []FileUsage   `json:"files"`              // largest first
}

// WindowUsage is what one window (or the edits outside windows, or a
// rewind) added to the store: the objects it named first.
type WindowUsage struct {
	ID          string `json:"id"`
	Tool        string `json:"tool,omitempty"`
	Objects     int    `json:"objects"`
	StoredBytes int64  `json:"stored_bytes"`
}

// FileUsage is what one path's versions take in the store.
type FileUsage struct {
	Path        string `json:"path"`
	Versions    int    `json:"versions"` // distinct contents stored first for it
	StoredBytes int64  `json:"stored_bytes"`
}

// Measure computes the usage of a store from its objects and timeline;
// top limits the window and file lists (0: all). sessionOf maps a window id
// to the agent session it belongs to (from the session logs), for the
// per-session figures; nil leaves them out.
func Measure(store string, s *cas.Local, records []index.Record, top int, sessionOf map[string]string) (*Usage, error) {
	u := &Usage{Store: store, Records: len(records)}
	stored := map[index.Hash]cas.Info{}
	err := s.Walk(func(i cas.Info) error {
		u.Objects++
		u.StoredBytes += i.Stored
		if i.Size > 0 {
			u.ContentBytes += i.Size
		}
		stored[i.Hash] = i
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Join(store, index.TimelineFile)); err == nil {
		u.TimelineBytes = st.Size()
	}
	u.Watermark, _ = index.Watermark(records)
	tools := map[string]string{}
	windows := map[string]*WindowUsage{}
	files := map[string]*FileUsage{}
	seen := map[index.Hash]bool{}
	for i := range records {
		r := &records[i]
		if r.Kind == index.KindOpen {
			tools[r.Window] = r.Tool
		}
		if r.State == nil || r.Hash == "" {
			continue
		}
		u.FullCopyBytes += r.Size
		if seen[r.Hash] {
			continue
		}
		seen[r.Hash] = true
		info, ok := stored[r.Hash]
		if !ok {
			continue // collected, or missing (ckfs verify tells which)
		}
		id := r.Window
		if r.Kind == index.KindOutside {
			id = "(outside windows)"
		}
		w := windows[id]
		if w == nil {
			w = &WindowUsage{ID: id, Tool: tools[id]}
			windows[id] = w
		}
		w.Objects++
		w.StoredBytes += info.Stored
		f := files[r.Path]
		if f == nil {
			f = &FileUsage{Path: r.Path}
			files[r.Path] = f
		}
		f.Versions++
		f.StoredBytes += info.Stored
	}
	u.ranked(windows, files, sessionOf)
	if top > 0 {
		u.Windows = u.Windows[:min(top, len(u.Windows))]
		u.Files = u.Files[:min(top, len(u.Files))]
	}
	u.CompressionRatio = ratio(u.ContentBytes, u.StoredBytes)
	u.DedupRatio = ratio(u.FullCopyBytes, u.ContentBytes)
	u.SavingRatio = ratio(u.FullCopyBytes, u.StoredBytes+u.TimelineBytes)
	return u, nil
}

// ranked lists the windows, the sessions their windows belong to, and the
// files, each by the bytes they keep stored, most first.
func (u *Usage) ranked(windows map[string]*WindowUsage, files map[string]*FileUsage, sessionOf map[string]string) {
	sessions := map[string]*WindowUsage{}
	for _, w := range windows {
		u.Windows = append(u.Windows, *w)
		if sid, ok := sessionOf[w.ID]; ok {
			su := sessions[sid]
			if su == nil {
				su = &WindowUsage{ID: sid}
				sessions[sid] = su
			}
			su.Objects += w.Objects
			su.StoredBytes += w.StoredBytes
		}
	}
	for _, su := range sessions {
		u.Sessions = append(u.Sessions, *su)
	}
	sort.Slice(u.Sessions, func(i, j int) bool { return u.Sessions[i].StoredBytes > u.Sessions[j].StoredBytes })
	sort.Slice(u.Windows, func(i, j int) bool {
		a, b := u.Windows[i], u.Windows[j]
		return a.StoredBytes > b.StoredBytes || a.StoredBytes == b.StoredBytes && a.ID < b.ID
	})
	for _, f := range files {
		u.Files = append(u.Files, *f)
	}
	sort.Slice(u.Files, func(i, j int) bool {
		a, b := u.Files[i], u.Files[j]
		return a.StoredBytes > b.StoredBytes || a.StoredBytes == b.StoredBytes && a.Path < b.Path
	})
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
