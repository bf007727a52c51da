package remote

import (
	"context"
	"fmt"
	"sort"
	"strings"
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

// OnlyWorkspace picks the workspace a reading command means when none is
// named: own (the id of the workspace it runs in, "" for none) when the
// bucket holds it, else the bucket's one workspace. Anything else is
// ambiguous, and the error lists the ids to choose from.
func OnlyWorkspace(ctx context.Context, b *Bucket, own string) (string, error) {
	heads, err := Workspaces(ctx, b)
	if len(heads) == 0 && err != nil {
		return "", err
	}
	var ids []string
	for _, h := range heads {
		if h.Workspace == own {
			return own, nil
		}
		ids = append(ids, fmt.Sprintf("%s (%s on %s)", h.Workspace, h.Root, h.Host))
	}
	switch len(heads) {
	case 0:
		return "", fmt.Errorf("%s holds no workspace yet (ckfs push puts one there)", b)
	case 1:
		return heads[0].Workspace, nil
	}
	return "", fmt.Errorf("%s holds %d workspaces: name one with --workspace ID:\n  %s", b, len(heads), strings.Join(ids, "\n  "))
}
