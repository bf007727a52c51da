package fusefs

import (
	"bytes"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// resendBit marks a request the kernel sends again after a successor asked
// it to (FUSE_NOTIFY_RESEND): the unique id of a request the dead daemon
// had read and not answered, with bit 63 set (FUSE_UNIQUE_RESEND).
const resendBit = 1 << 63

// resent answers a request that comes again after a takeover as its first
// delivery would have been answered, where the dead daemon may already have
// carried it out: a MKDIR, MKNOD, SYMLINK or LINK whose name now exists as
// that request would have made it, an UNLINK or RMDIR whose name is gone,
// a RENAME whose source is gone and whose destination exists, a SETXATTR
// that may not replace and finds its value, a REMOVEXATTR whose attribute
// is gone. Without it the process that made the request would see EEXIST
// or ENOENT for a change that succeeded ("mkdir: File exists" from a plain
// mkdir). Only a resent request is looked at; every other request goes
// through as is.
//
// What it cannot tell apart: a name that was already there before a
// resent MKDIR (the first delivery would have failed; the resend
// succeeds, leaving what mkdir asked for), and a RENAME_EXCHANGE, which
// done twice undoes itself.
type resent struct {
	fuse.RawFileSystem
	gate *opGate // closed while an upgrade retires the daemon (drain.go)
	// after, if set, is called with a directory operation's name once it
	// is carried out, before its reply (tests kill the daemon there).
	after func(op string)
	// journal records the node ids handed out (nodejournal.go).
	journal *nodeJournal
}

// ReadDirPlus writes the journal records of the nodes its listing hands
// out together, before the reply (nodeJournal).
func (r *resent) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	r.journal.beginListing(cancel)
	defer r.journal.endListing(cancel)
	return r.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func isResend(h *fuse.InHeader) bool { return h.Unique&resendBit != 0 }

func (r *resent) done(op string) {
	if r.after != nil {
		r.after(op)
	}
}

// Mkdir is MKDIR; a resent one finds its directory made.
func (r *resent) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.Mkdir(cancel, in, name, out)
	if st == fuse.Status(syscall.EEXIST) && isResend(&in.InHeader) {
		return r.existing(cancel, &in.InHeader, name, out, syscall.S_IFDIR, "")
	}
	r.done("mkdir")
	return st
}

// Mknod is MKNOD (every new file, in the cached model); a resent one
// finds its node made.
func (r *resent) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.Mknod(cancel, in, name, out)
	if st == fuse.Status(syscall.EEXIST) && isResend(&in.InHeader) {
		return r.existing(cancel, &in.InHeader, name, out, in.Mode&syscall.S_IFMT, "")
	}
	r.done("mknod")
	return st
}

// Symlink is SYMLINK; a resent one finds its link, to the same target.
func (r *resent) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.Symlink(cancel, h, target, name, out)
	if st == fuse.Status(syscall.EEXIST) && isResend(h) {
		return r.existing(cancel, h, name, out, syscall.S_IFLNK, target)
	}
	r.done("symlink")
	return st
}

// Link is LINK; a resent one finds the name linked to the same inode.
func (r *resent) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.Link(cancel, in, name, out)
	if st == fuse.Status(syscall.EEXIST) && isResend(&in.InHeader) {
		var src fuse.AttrOut
		h := in.InHeader
		h.NodeId = in.Oldnodeid
		if r.RawFileSystem.GetAttr(cancel, &fuse.GetAttrIn{InHeader: h}, &src) != fuse.OK {
			return st
		}
		if got := r.existing(cancel, &in.InHeader, name, out, syscall.S_IFMT&src.Mode, ""); got != fuse.OK || out.Ino != src.Ino {
			if got == fuse.OK {
				r.RawFileSystem.Forget(out.NodeId, 1)
			}
			return st
		}
		return fuse.OK
	}
	r.done("link")
	return st
}

// Unlink is UNLINK; a resent one finds the name gone.
func (r *resent) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.removal("unlink", h, func() fuse.Status { return r.RawFileSystem.Unlink(cancel, h, name) })
}

// Rmdir is RMDIR; a resent one finds the directory gone.
func (r *resent) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.removal("rmdir", h, func() fuse.Status { return r.RawFileSystem.Rmdir(cancel, h, name) })
}

// removal is the UNLINK or RMDIR that remove does: a resent one, whose
// first sending removed the name, finds it gone and succeeds as that did.
func (r *resent) removal(op string, h *fuse.InHeader, remove func() fuse.Status) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := remove()
	if st == fuse.ENOENT && isResend(h) {
		return fuse.OK
	}
	r.done(op)
	return st
}

// Rename is RENAME and RENAME2; a resent one finds its source gone and its
// destination there.
func (r *resent) Rename(cancel <-chan struct{}, in *fuse.RenameIn, from, to string) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.Rename(cancel, in, from, to)
	if (st == fuse.ENOENT || st == fuse.Status(syscall.EEXIST)) && isResend(&in.InHeader) && in.Flags&unixRenameExchange == 0 {
		h := in.InHeader
		if r.exists(cancel, &h, from) == fuse.ENOENT {
			h.NodeId = in.Newdir
			if r.exists(cancel, &h, to) == fuse.OK {
				return fuse.OK
			}
		}
		return st
	}
	r.done("rename")
	return st
}

// SetXAttr is SETXATTR; a resent XATTR_CREATE finds the attribute set to
// its value.
func (r *resent) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.SetXAttr(cancel, in, attr, data)
	if st == fuse.Status(syscall.EEXIST) && isResend(&in.InHeader) {
		buf := make([]byte, len(data)+1)
		if n, got := r.RawFileSystem.GetXAttr(cancel, &in.InHeader, attr, buf); got == fuse.OK && bytes.Equal(buf[:n], data) {
			return fuse.OK
		}
		return st
	}
	r.done("setxattr")
	return st
}

// RemoveXAttr is REMOVEXATTR; a resent one finds the attribute gone.
func (r *resent) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	r.gate.enter()
	defer r.gate.leave()
	st := r.RawFileSystem.RemoveXAttr(cancel, h, attr)
	if st == fuse.ENODATA && isResend(h) {
		return fuse.OK
	}
	r.done("removexattr")
	return st
}

// unixRenameExchange is RENAME_EXCHANGE.
const unixRenameExchange = 1 << 1

// existing looks name up in the request's directory and, when it is of
// type typ (and, for a symlink, points at target), answers with its entry
// as the request itself would have; otherwise EEXIST, as before.
func (r *resent) existing(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut, typ uint32, target string) fuse.Status {
	if st := r.RawFileSystem.Lookup(cancel, h, name, out); st != fuse.OK || out.NodeId == 0 {
		return fuse.Status(syscall.EEXIST)
	}
	ok := out.Mode&syscall.S_IFMT == typ
	if ok && typ == syscall.S_IFLNK {
		lh := *h
		lh.NodeId = out.NodeId
		got, st := r.RawFileSystem.Readlink(cancel, &lh)
		ok = st == fuse.OK && string(got) == target
	}
	if !ok {
		r.RawFileSystem.Forget(out.NodeId, 1)
		return fuse.Status(syscall.EEXIST)
	}
	return fuse.OK
}

// exists says whether name is in the request's directory (OK) or not
// (ENOENT), or why it cannot tell; the lookup's reference is given back
// at once.
func (r *resent) exists(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	var out fuse.EntryOut
	st := r.RawFileSystem.Lookup(cancel, h, name, &out)
	switch {
	case st != fuse.OK:
		return st
	case out.NodeId == 0: // a negative entry, for the kernel to cache
		return fuse.ENOENT
	}
	r.RawFileSystem.Forget(out.NodeId, 1)
	return fuse.OK
}
