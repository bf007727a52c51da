package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/durable"
	"github.com/ckfs-dev/ckfs/workspace"
	"github.com/zeebo/blake3"
)

// MirrorDir is where Mirror keeps the copy of a workspace of a bucket:
// under the user's cache, one directory per bucket URL and workspace.
func MirrorDir(b *Bucket, ws string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for a copy of the remote workspace (set XDG_CACHE_HOME): %w", err)
	}
	sum := blake3.Sum256([]byte(b.desc))
	return filepath.Join(cache, "ckfs", "remote", fmt.Sprintf("%x-%s", sum[:6], ws)), nil
}

// MirrorCopy brings the copy of workspace ws of the bucket, in the
// user's cache (MirrorDir), up to date and returns its directory.
func MirrorCopy(ctx context.Context, b *Bucket, ws string) (string, error) {
	dir, err := MirrorDir(b, ws)
	if err != nil {
		return "", err
	}
	return dir, Mirror(ctx, b, ws, dir)
}

// Mirror makes dir a store holding a workspace of the bucket as far as
// the bucket has it: its store.json, its timeline (the segments in order),
// its marks and session logs, and every object a checkpoint the bucket
// keeps needs. The commands that read a store (log, show, diff) then read
// it as any unmounted store. Objects already in dir are not fetched
// again; each one fetched is checked against its address. An object the
// bucket no longer has is left out (the commands report it missing).
func Mirror(ctx context.Context, b *Bucket, ws, dir string) error {
	head, recs, err := Timeline(ctx, b, ws)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := workspace.Init(dir, head.Root); err != nil {
		return err
	}
	lay := workspace.Layout(dir)
	var timeline bytes.Buffer
	for _, s := range head.Timeline {
		data, err := b.getObject(ctx, s.Object)
		if err != nil {
			return err
		}
		timeline.Write(data)
	}
	if err := writeIfChanged(lay.Timeline(), timeline.Bytes()); err != nil {
		return err
	}
	for name, h := range head.Files {
		data, err := b.getObject(ctx, h)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := writeIfChanged(p, data); err != nil {
			return err
		}
	}
	local, err := cas.Open(dir, nil)
	if err != nil {
		return err
	}
	var todo []cas.Hash
	for h := range index.Live(recs, head.Watermark) {
		a, err := cas.ParseHash(string(h))
		if err != nil {
			continue
		}
		if ok, _ := local.Has(a); !ok {
			todo = append(todo, a)
		}
	}
	return forEach(ctx, len(todo), func(i int) error {
		data, err := b.getObject(ctx, todo[i])
		if errors.Is(err, errMissing) {
			return nil // the commands report it missing
		}
		if err == nil {
			_, _, err = local.Put(data)
		}
		return err
	})
}

// writeIfChanged replaces path with data, durably, unless it holds data.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return durable.WriteFile(path, data, 0o600)
}
