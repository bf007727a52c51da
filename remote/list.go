package remote

import (
	"context"
	"fmt"
	"sort"
)

// Workspaces returns the head of every workspace in the bucket, most
// recently updated first. A head that cannot be read is returned as an
// error naming it, after the others.
func Workspaces(ctx context.Context, b *Bucket) ([]*Head, error) {
	ids, err := b.dirs(ctx, "workspaces/")
	if err != nil {
		return nil, err
	}
	var out []*Head
	var bad error
	for _, id := range ids {
		if !ValidWorkspace(id) {
			continue
		}
		h, _, err := b.readHead(ctx, id)
		if err != nil {
			bad = fmt.Errorf("workspace %s: %w", id, err)
			continue
		}
		if h != nil && h.Dropped.IsZero() {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, bad
}
