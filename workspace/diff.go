package workspace

import (
	"maps"
	"slices"

	"github.com/ckfs-dev/ckfs/index"
)

// FileDiff is a recorded path between two checkpoints, or between a
// checkpoint and the file on disk now (Disk), with both contents.
type FileDiff struct {
	Path             string
	From, To         index.State
	FromData, ToData []byte
	Disk             bool
	// Unknown is why a side's content is not stored; the datas are then
	// empty.
	Unknown string
}

// Diffs calls fn, in path order, for every path recorded by checkpoint a:
// with b, those whose content differs at b; with toDisk, every one, with
// the file as it is now.
func (v *View) Diffs(a, b uint64, toDisk bool, fn func(FileDiff) error) error {
	sa := index.StateAt(v.Records, a)
	var sb map[string]index.Entry
	if !toDisk {
		sb = index.StateAt(v.Records, b)
	}
	for _, p := range slices.Sorted(maps.Keys(sa)) {
		ea := sa[p]
		d := FileDiff{Path: p, From: ea.State, Disk: toDisk}
		if toDisk {
			now, typ, err := v.DiskContent(p)
			if err != nil {
				return err
			}
			d.To, d.ToData = index.State{Type: typ, Mode: ea.Mode}, now
			if ea.Unknown {
				d.Unknown = ea.Reason
				if err := fn(d); err != nil {
					return err
				}
				continue
			}
		} else {
			eb := sb[p]
			if ea.SameContent(eb.State) {
				continue
			}
			d.To = eb.State
			if ea.Unknown || eb.Unknown {
				d.Unknown = ea.Reason + eb.Reason
				if err := fn(d); err != nil {
					return err
				}
				continue
			}
			var err error
			if d.ToData, err = v.Content(eb.State); err != nil {
				return err
			}
		}
		var err error
		if d.FromData, err = v.Content(ea.State); err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}
