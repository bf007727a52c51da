package rewind

import (
	"fmt"
	"os"

	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/xattr"
	"golang.org/x/sys/unix"
)

// Meta is what a restore puts back beside the content: mode, owner and
// extended attributes (the user namespace and POSIX ACLs). A state
// recorded before ckfs recorded owners (index.State.HasMeta) restores the
// mode only.
type Meta struct {
	Mode   uint32
	Owner  string            // "uid:gid"; "" leaves the owner as it is
	XAttrs map[string][]byte // the whole recorded set
	Full   bool              // owner and XAttrs apply (else mode only)
}

// canChown reports whether this process may give files to any owner.
var canChown = os.Geteuid() == 0

// metaOf loads the metadata a target state asks for.
func (a *Applier) metaOf(t index.State) (Meta, error) {
	m := Meta{Mode: t.Mode, Owner: t.Owner, Full: t.HasMeta()}
	if t.XAttrs == "" {
		return m, nil
	}
	h := t.XAttrs
	b, err := a.Store.Get(h)
	if err != nil {
		return m, fmt.Errorf("extended attributes: %w", err)
	}
	m.XAttrs, err = index.DecodeXAttrs(b)
	return m, err
}

// applyMeta sets owner, extended attributes and mode on an open file or
// directory, in that order: a chown clears setuid and setgid, and an ACL
// sets the group bits of the mode, so the mode comes last.
func applyMeta(f *os.File, m Meta) error {
	fd := int(f.Fd())
	if m.Full {
		if err := chownFd(fd, m.Owner); err != nil {
			return err
		}
		if err := xattr.Apply(f, m.XAttrs); err != nil {
			return err
		}
	}
	return unix.Fchmod(fd, m.Mode)
}

// chownFd gives fd to owner when this process may (root); otherwise the
// owner stays as it is, which the preview says beforehand.
func chownFd(fd int, owner string) error {
	uid, gid, ok := index.ParseOwner(owner)
	if !ok || !canChown {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && st.Uid == uid && st.Gid == gid {
		return nil
	}
	return unix.Fchown(fd, int(uid), int(gid))
}

// chownAt gives name in pfd to owner (not following a symlink), when this
// process may.
func chownAt(pfd int, name, owner string) error {
	uid, gid, ok := index.ParseOwner(owner)
	if !ok || !canChown {
		return nil
	}
	return unix.Fchownat(pfd, name, int(uid), int(gid), unix.AT_SYMLINK_NOFOLLOW)
}

// ownerCheck warns about owners the rewind cannot put back: only root
// may give a file to another owner.
func ownerCheck(p *Plan) Check {
	var paths []string
	if !canChown {
		for _, s := range p.Steps {
			t := s.Target
			if t.HasMeta() && t.Type != index.TypeAbsent && t.Owner != s.Current.Owner && t.Owner != index.OwnerOf(uint32(os.Geteuid()), uint32(os.Getegid())) {
				paths = append(paths, fmt.Sprintf("%s (owner %s, now %s)", index.Display(s.Path), t.Owner, pick(s.Current.Owner == "", "new", s.Current.Owner)))
			}
		}
	}
	return Check{Name: "owners", OK: true, Warn: len(paths) > 0, Paths: paths,
		Detail: pick(len(paths) == 0, "every owner the rewind sets can be set",
			"these owners cannot be restored without root: the files are restored, owned by you")}
}

// linkCheck warns about files with more than one name (hard links) that
// the rewind replaces or removes: it writes a new file under the recorded
// name, so the file's other names keep what they hold now.
func linkCheck(p *Plan, d *Dir) Check {
	var paths []string
	for _, s := range p.Steps {
		if s.Current.Type != index.TypeFile {
			continue
		}
		if n := d.Links(s.Path); n > 1 {
			paths = append(paths, fmt.Sprintf("%s (%d names)", index.Display(s.Path), n))
		}
	}
	return Check{Name: "hard links", OK: true, Warn: len(paths) > 0, Paths: paths,
		Detail: pick(len(paths) == 0, "no file the rewind replaces has other names",
			"these files have other names (hard links): the rewind gives this name its own file, and the other names keep their current content")}
}
