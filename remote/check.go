package remote

import (
	"context"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// Check asks the bucket for one key of its listing, within timeout, the
// way a push starts: it fails when the endpoint does not answer, the
// bucket does not exist, or the credentials are refused, with an error
// that says which.
func Check(ctx context.Context, b *Bucket, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	objects := b.c.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: b.prefix, MaxKeys: 1})
	defer func() {
		cancel()
		for range objects { // let the lister end
		}
	}()
	if o, ok := <-objects; ok && o.Err != nil {
		switch minio.ToErrorResponse(o.Err).Code {
		case "NoSuchBucket":
			return fmt.Errorf("%s: the bucket does not exist at %s (create it first)", b.desc, b.c.EndpointURL().Host)
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch":
			return fmt.Errorf("%s: %s refused the credentials (%v): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", b.desc, b.c.EndpointURL().Host, o.Err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %s did not answer within %s: is the server running and the endpoint right?", b.desc, b.c.EndpointURL().Host, timeout)
		}
		return fmt.Errorf("%s: %s: %v: is the server running and the endpoint right?", b.desc, b.c.EndpointURL().Host, o.Err)
	}
	return nil
}
