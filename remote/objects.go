package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/cas"
)

// objectKey is where the object h lives in the bucket: as in a local store.
func objectKey(h cas.Hash) string {
	x := h.Hex()
	return "objects/" + x[0:2] + "/" + x[2:4] + "/" + x
}

// putObject uploads the object file raw of h unless the bucket has it:
// content addressing makes the upload idempotent and shares it with every
// workspace using the bucket. It reports whether it uploaded.
func (b *Bucket) putObject(ctx context.Context, h cas.Hash, raw []byte) (bool, error) {
	key := objectKey(h)
	if ok, err := b.exists(ctx, key); err != nil || ok {
		return false, err
	}
	// Another uploader may win between the check and the write; the
	// bytes are the same either way.
	if _, err := b.put(ctx, key, raw, putOptions{ifNone: true}); err != nil && !errors.Is(err, errChanged) {
		return false, err
	}
	return true, nil
}

// getObject downloads the object h and returns its content, checked
// against its address. A damaged download is fetched once more before it
// is reported.
func (b *Bucket) getObject(ctx context.Context, h cas.Hash) ([]byte, error) {
	var last error
	for range 2 {
		raw, _, err := b.get(ctx, objectKey(h))
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
