// Package remote keeps workspaces' checkpoints in an S3-compatible bucket,
// so that they outlive the machine that made them: objects exactly as the
// local store holds them, each workspace's timeline as immutable segments
// named from a small head object that only conditional writes replace, and
// a baseline of the files no record names. The layout is specified in
// docs/format.md section 6a. The local store stays the write path: nothing
// here is on the way of a capture.
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Remote names a bucket and a prefix in it, and how to reach it.
type Remote struct {
	URL      string `json:"url"`                // s3://BUCKET[/PREFIX]
	Endpoint string `json:"endpoint,omitempty"` // host:port, or an http(s):// URL; default from the environment
}

// Bucket is an opened remote.
type Bucket struct {
	c      *minio.Client
	bucket string
	prefix string // "" or ending in "/"
	desc   string // for messages
}

// ParseURL splits s3://BUCKET/PREFIX.
func ParseURL(s string) (bucket, prefix string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("remote URL %q: want s3://BUCKET or s3://BUCKET/PREFIX", s)
	}
	prefix = strings.Trim(path.Clean("/"+u.Path), "/")
	if prefix != "" {
		prefix += "/"
	}
	return u.Host, prefix, nil
}

// endpoint resolves where the bucket is served: the remote's own setting,
// else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS itself.
func (r Remote) endpoint() (host string, secure bool, err error) {
	e := r.Endpoint
	for _, v := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if e == "" {
			e = os.Getenv(v)
		}
	}
	if e == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(e, "://") {
		return e, true, nil
	}
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false, fmt.Errorf("endpoint %q: want host:port, http://host:port or https://host", e)
	}
	return u.Host, u.Scheme == "https", nil
}

// Open connects to r. Credentials come from the usual AWS environment
// variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN),
// else the shared credentials file and AWS_PROFILE; the region from
// AWS_REGION (default us-east-1). Nothing is sent until the first request.
func Open(r Remote) (*Bucket, error) {
	bucket, prefix, err := ParseURL(r.URL)
	if err != nil {
		return nil, err
	}
	host, secure, err := r.endpoint()
	if err != nil {
		return nil, err
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = "us-east-1"
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{Profile: os.Getenv("AWS_PROFILE")},
	})
	// A few retries with the library's backoff: a remote that is down
	// is reported in seconds, and the next push tries again.
	c, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: region, MaxRetries: 4})
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", r.URL, err)
	}
	return &Bucket{c: c, bucket: bucket, prefix: prefix, desc: r.URL}, nil
}

func (b *Bucket) String() string { return b.desc }

// errMissing is a key that does not exist.
var errMissing = errors.New("no such key")

// errChanged is a conditional write that lost: the object changed.
var errChanged = errors.New("changed by another writer")

// errTooLarge is a key larger than ckfs reads of its kind: reading it
// again will not shrink it.
var errTooLarge = errors.New("the bucket holds something ckfs did not write (remove the key, or use another bucket)")

func (b *Bucket) wrap(key string, err error) error {
	if err == nil {
		return nil
	}
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey":
		return fmt.Errorf("%s/%s: %w", b.desc, key, errMissing)
	case "PreconditionFailed":
		return fmt.Errorf("%s/%s: %w", b.desc, key, errChanged)
	case "NoSuchBucket":
		return fmt.Errorf("%s: the bucket does not exist (create it first)", b.desc)
	}
	return fmt.Errorf("%s/%s: %w", b.desc, key, err)
}

// get returns the bytes of key and its ETag. A read that fails midway (a
// dropped connection, a short body) is retried with backoff: the client
// library retries failed requests, not failed bodies.
func (b *Bucket) get(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	delay := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		data, etag, err := b.getOnce(ctx, key, limit)
		if err == nil || errors.Is(err, errMissing) || errors.Is(err, errTooLarge) || attempt == 5 || ctx.Err() != nil {
			return data, etag, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
		delay *= 3
	}
}

// The most ckfs reads of one key: an object, the largest content with its
// header and a body that did not compress; a head or a lock, a JSON
// document far larger than any ckfs writes.
const (
	maxGet     = cas.MaxObjectSize + 1<<20
	maxGetHead = 64 << 20
	maxGetLock = 1 << 20
)

func (b *Bucket) getOnce(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	o, err := b.c.GetObject(ctx, b.bucket, b.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", b.wrap(key, err)
	}
	defer o.Close()
	st, err := o.Stat()
	if err != nil {
		return nil, "", b.wrap(key, err)
	}
	// The bucket may be anyone's: never read more than an object can
	// hold, whatever size the server states.
	if st.Size > limit {
		return nil, "", fmt.Errorf("%s/%s: %d bytes, more than the %d ckfs reads of such a key: %w", b.desc, key, st.Size, limit, errTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(o, st.Size+1))
	if err != nil {
		return nil, "", b.wrap(key, err)
	}
	if int64(len(data)) != st.Size {
		return nil, "", fmt.Errorf("%s/%s: got %d bytes of %d", b.desc, key, len(data), st.Size)
	}
	return data, st.ETag, nil
}

// putOptions are how put treats an existing key.
type putOptions struct {
	ifNone  bool   // only when the key does not exist
	ifMatch string // only when the key has this ETag
}

// put writes key; the ETag of what it wrote is returned.
func (b *Bucket) put(ctx context.Context, key string, data []byte, o putOptions) (string, error) {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true}
	switch {
	case o.ifNone:
		opts.SetMatchETagExcept("*")
	case o.ifMatch != "":
		opts.SetMatchETag(o.ifMatch)
	}
	info, err := b.c.PutObject(ctx, b.bucket, b.prefix+key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return "", b.wrap(key, err)
	}
	return info.ETag, nil
}

// stat reports whether key exists, and when it was last written.
func (b *Bucket) stat(ctx context.Context, key string) (bool, time.Time, error) {
	info, err := b.c.StatObject(ctx, b.bucket, b.prefix+key, minio.StatObjectOptions{})
	if err == nil {
		return true, info.LastModified, nil
	}
	if err = b.wrap(key, err); errors.Is(err, errMissing) {
		return false, time.Time{}, nil
	}
	return false, time.Time{}, err
}

// remove deletes key; a missing key is not an error.
func (b *Bucket) remove(ctx context.Context, key string) error {
	return b.wrap(key, b.c.RemoveObject(ctx, b.bucket, b.prefix+key, minio.RemoveObjectOptions{}))
}

// dirs lists the names directly under dir (a key prefix ending in "/").
func (b *Bucket) dirs(ctx context.Context, dir string) ([]string, error) {
	var out []string
	for o := range b.c.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: b.prefix + dir}) {
		if o.Err != nil {
			return nil, b.wrap(dir, o.Err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(o.Key, b.prefix+dir), "/")
		if name != "" && !strings.Contains(name, "/") {
			out = append(out, name)
		}
	}
	return out, nil
}
