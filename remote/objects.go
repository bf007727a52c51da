package remote

import (
	"context"
	"time"

	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/internal/testhooks"

	"github.com/ckfs-dev/ckfs/cas"
)

// objectKey is where the object h lives in the bucket: as in a local store.
func objectKey(h cas.Hash) string {
	x := h.Hex()
	return "objects/" + x[0:2] + "/" + x[2:4] + "/" + x
}

// Grace is how long a collection of a shared bucket leaves an object that
// no head names, so that an upload whose head is not yet written is never
// collected from under it. It is split in three: an upload that finds its
// object older than a third of it writes it again (renewing it), a push
// that takes longer than a third starts over, and a collection that takes
// longer than a third between reading the heads and deleting stops. An
// object a head is about to name is then younger than the grace period
// whenever a collection that has not seen that head deletes.
func Grace() time.Duration {
	if g, ok := testhooks.RemoteGrace(); ok {
		return g
	}
	return 24 * time.Hour
}

// putObject uploads the object file raw of h unless the bucket has it:
// content addressing makes the upload idempotent and shares it with every
// workspace using the bucket. It reports whether it uploaded.
func (b *Bucket) putObject(ctx context.Context, h cas.Hash, raw []byte) (bool, error) {
	key := objectKey(h)
	ok, mod, err := b.stat(ctx, key)
	if err != nil {
		return false, err
	}
	if ok && time.Since(mod) < Grace()/3 {
		return false, nil
	}
	// Another uploader may win between the check and the write; the
	// bytes are the same either way. An object old enough to be
	// collected is written again, unconditionally, to renew it.
	if _, err := b.put(ctx, key, raw, putOptions{ifNone: !ok}); err != nil && !errors.Is(err, errChanged) {
		return false, err
	}
	return !ok, nil
}

// getObject downloads the object h and returns its content, checked
// against its address. A damaged download is fetched once more before it
// is reported.
func (b *Bucket) getObject(ctx context.Context, h cas.Hash) ([]byte, error) {
	var last error
	for range 2 {
		raw, _, err := b.get(ctx, objectKey(h), maxGet)
		if err != nil {
			return nil, err
		}
		data, err := cas.Decode(h, raw)
		if err == nil {
			return data, nil
		}
		last = err
	}
	return nil, fmt.Errorf("%s: object %s is damaged in the bucket (downloaded twice): %w", b.desc, h, last)
}
