package remote

import (
	"strings"

	"github.com/ckfs-dev/ckfs/workspace"
)

// Resolve finds a remote of the store's configuration c by name, or takes
// an s3:// URL as one (with the endpoint given). With name "" it is the
// only remote configured. It returns the remote and its name in c ("" for
// a URL).
func Resolve(c *workspace.Remotes, name, endpoint string) (Remote, string, error) {
	if strings.HasPrefix(name, "s3://") {
		if _, _, err := ParseURL(name); err != nil {
			return Remote{}, "", workspace.Errorf(workspace.ErrUsage, "%v", err)
		}
		return Remote{URL: name, Endpoint: endpoint}, "", nil
	}
	if name == "" {
		if len(c.Remotes) != 1 {
			return Remote{}, "", workspace.Errorf(workspace.ErrUsage, "%d remotes are configured: name one with --remote (ckfs remote add NAME s3://BUCKET/PREFIX adds one)", len(c.Remotes))
		}
		name = c.Names()[0]
	}
	r, ok := c.Remotes[name]
	if !ok {
		return Remote{}, "", workspace.Errorf(workspace.ErrUsage, "no remote %q (ckfs remote list shows them; --remote also takes an s3:// URL)", name)
	}
	if endpoint == "" {
		endpoint = r.Endpoint
	}
	return Remote{URL: r.URL, Endpoint: endpoint}, name, nil
}

// OpenFor opens the remote that name and endpoint give (as Resolve takes
// them) for the workspace whose store is store, and returns its name in
// the store's remotes ("" for a URL). store may be "" (no workspace here):
// name must then be a URL.
func OpenFor(store, name, endpoint string) (*Bucket, string, error) {
	c := &workspace.Remotes{Remotes: map[string]workspace.RemoteConfig{}}
	if store != "" {
		var err error
		if c, err = workspace.LoadRemotes(store); err != nil {
			return nil, "", err
		}
	}
	r, rname, err := Resolve(c, name, endpoint)
	if err != nil {
		return nil, "", err
	}
	b, err := Open(r)
	return b, rname, err
}
