package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ckfs-dev/ckfs/capture"
	"github.com/ckfs-dev/ckfs/remote"
	"github.com/ckfs-dev/ckfs/workspace"
)

// The uploader pushes the store to its remotes in the background, so a
// sandbox that disappears has already shipped its checkpoints: a short
// while after a window closes (a burst of windows goes as one segment),
// and every minute while records wait. A failed push waits, doubling from
// a second to five minutes, and is recorded in remotes.json for ckfs
// status. Nothing of it is on capture's way: pushes read the timeline and
// the objects as any reader does.
type uploader struct {
	d        *daemon
	failing  bool // the last background push failed (only loop and close touch it, in turn)
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

const (
	uploadDelay    = 2 * time.Second
	uploadEvery    = time.Minute
	uploadMaxWait  = 5 * time.Minute
	uploadAtStop   = 30 * time.Second
	uploadFirstErr = time.Second
)

func (d *daemon) startUploader() *uploader {
	u := &uploader{d: d, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go u.loop()
	return u
}

// poke asks for a push soon; it never blocks.
func (u *uploader) poke() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

func (u *uploader) loop() {
	defer close(u.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-u.stop; cancel() }()
	wait := uploadFirstErr
	tick := time.NewTicker(uploadEvery)
	defer tick.Stop()
	for {
		select {
		case <-u.kick:
		case <-tick.C:
		case <-u.stop:
			return
		}
		select {
		case <-time.After(uploadDelay):
		case <-u.stop:
			return
		}
		err := u.d.pushAll(ctx)
		u.failing = err != nil
		if err != nil && ctx.Err() == nil {
			u.d.log.Warn("background push failed; will retry", "err", err, "in", wait.String())
			select {
			case <-time.After(wait):
			case <-u.stop:
				return
			}
			wait = min(2*wait, uploadMaxWait)
			u.poke()
			continue
		}
		wait = uploadFirstErr
	}
}

// halt stops the background pushes and waits for the one running.
func (u *uploader) halt() {
	u.stopOnce.Do(func() { close(u.stop) })
	<-u.done
}

// close stops the background pushes and makes one last push of what
// capture recorded, within uploadAtStop.
func (u *uploader) close() {
	u.halt()
	if u.failing {
		// The remote was failing: an unmount does not wait for it.
		u.d.log.Warn("no push at unmount: the remote was failing; ckfs push sends the rest")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), uploadAtStop)
	defer cancel()
	if err := u.d.pushAll(ctx); err != nil {
		u.d.log.Error("push at unmount failed; ckfs push sends the rest", "err", err)
	}
}

// pushAll pushes to every remote that lacks records; the first error is
// returned after all were tried.
func (d *daemon) pushAll(ctx context.Context) error {
	c, err := workspace.LoadRemotes(d.o.Store)
	if err != nil || len(c.Remotes) == 0 {
		return err
	}
	last := d.tl.LastSeq()
	if c.Workspace == "" {
		if c, err = workspace.UpdateRemotes(d.o.Store, func(*workspace.Remotes) error { return nil }); err != nil {
			return err
		}
	}
	host, _ := os.Hostname()
	var first error
	for _, name := range c.Names() {
		rc := c.Remotes[name]
		if rc.Pushed >= last && !rc.PushedAt.IsZero() {
			continue
		}
		b, err := remote.Open(remote.Remote{URL: rc.URL, Endpoint: rc.Endpoint})
		if err == nil {
			var res *remote.PushResult
			res, err = remote.Push(ctx, b, remote.PushOptions{
				Store: d.o.Store, Name: name, Workspace: c.Workspace, Root: d.o.Root, Host: host,
				// The backing directory, not the mount: the daemon
				// never walks its own mount.
				Walk:     fmt.Sprintf("/proc/self/fd/%d/", d.rootFd),
				Excluded: d.rec.Excluded, MaxFileSize: d.o.MaxFileSize,
				Flush: func() error {
					// At unmount capture has closed, every record written.
					if err := d.rec.Flush(); !errors.Is(err, capture.ErrClosed) {
						return err
					}
					return nil
				},
			})
			if err == nil {
				d.log.Info("pushed", "remote", name, "last_seq", res.LastSeq, "records", res.Records, "uploaded", res.Uploaded)
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("remote %s: %w", name, err)
		}
	}
	return first
}
