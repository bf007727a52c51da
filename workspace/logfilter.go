package workspace

import (
	"github.com/ckfs-dev/ckfs/index"
)

// LogFilter narrows ckfs log: what LogEntries gives, newest first.
type LogFilter struct {
	All   bool     // keep windows in which nothing was written
	Paths []string // only entries that changed these paths (index.MatchPaths), listing only those files
	Max   int      // at most this many entries besides marks (0: all)
}

// Filter applies f to entries (in LogEntries' order). A mark is kept
// where an entry of its turn is, or where nothing narrows the log.
func (f LogFilter) Filter(entries []LogEntry) ([]LogEntry, error) {
	keep, err := index.MatchPaths(f.Paths)
	if err != nil {
		return nil, Errorf(ErrUsage, "%v", err)
	}
	var out []LogEntry
	kept := 0
	turnKept := map[int]bool{}
	for _, e := range entries {
		if e.Kind == "mark" {
			continue
		}
		if e.Kind == "window" && !e.Wrote && !f.All {
			continue
		}
		if len(f.Paths) > 0 {
			var files []LogFile
			for _, file := range e.Files {
				if keep(file.Path) {
					files = append(files, file)
				}
			}
			if len(files) == 0 {
				continue
			}
			e.Files = files
		}
		if f.Max > 0 && kept == f.Max {
			break
		}
		kept++
		turnKept[e.Mark] = true
		out = append(out, e)
	}
	narrowed := len(f.Paths) > 0 || f.Max > 0
	var result []LogEntry
	i := 0
	for _, e := range entries {
		if e.Kind == "mark" {
			if turnKept[e.Mark] || (!narrowed && e.Mark > 0) {
				result = append(result, e)
			}
			continue
		}
		if i < len(out) && out[i].Kind == e.Kind && out[i].Before == e.Before && out[i].ID == e.ID && out[i].Checkpoint == e.Checkpoint {
			result = append(result, out[i])
			i++
		}
	}
	return result, nil
}
