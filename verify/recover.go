package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/rewind"
	"github.com/ckfs-dev/ckfs/workspace"
	"golang.org/x/sys/unix"
)

// A corrupt object's content is often still in the workspace: the file it
// was captured from may hold it now. verify --repair looks there first and
// stores the good bytes over the corrupt object; only an object no file
// holds any more is moved to quarantine/ (never deleted: the damaged bytes
// may still help a person), which leaves it missing.

// QuarantineDir holds what verify --repair took out of the store.
const QuarantineDir = "quarantine"

// recoverCorrupt tries to recover each corrupt object from the workspace
// files recorded with its content; it returns what it did and the objects
// it could not recover.
func recoverCorrupt(store string, s *cas.Local, recs []index.Record, corrupt []string) (done, left []string) {
	return recoverObjects(store, s, recs, corrupt, "corrupt")
}

// recoverObjects recovers each object of hashes (what says how it was
// bad: corrupt, missing) from a workspace file that still holds its
// content, as recoverCorrupt does.
func recoverObjects(store string, s *cas.Local, recs []index.Record, hashes []string, what string) (done, left []string) {
	corrupt := hashes
	byHash := map[index.Hash][]string{}
	for _, r := range recs {
		if r.State != nil && r.Hash != "" && (r.Type == index.TypeFile || r.Type == index.TypeSymlink) {
			byHash[r.Hash] = append(byHash[r.Hash], r.Path)
		}
	}
	dir, closeDir := workspaceDir(store)
	defer closeDir()
	for _, c := range corrupt {
		h, _ := cas.ParseHash(c)
		from := ""
		if dir != nil {
			for _, p := range slices.Compact(slices.Sorted(slices.Values(byHash[index.Hash(c)]))) {
				b, err := dir.Content(p)
				if err == nil && cas.Sum(b) == h {
					if _, _, err := s.Put(b); err == nil && s.Verify(h) == nil {
						from = p
						break
					}
				}
			}
		}
		if from != "" {
			done = append(done, fmt.Sprintf("recovered %s object %s from %s", what, c, from))
			continue
		}
		left = append(left, c)
	}
	return done, left
}

// quarantine moves the object file of c into <store>/quarantine/.
func quarantine(store string, s *cas.Local, c string) error {
	h, err := cas.ParseHash(c)
	if err != nil {
		return err
	}
	q := workspace.Layout(store).Quarantine()
	if err := os.MkdirAll(q, 0o700); err != nil {
		return err
	}
	return s.Evict(h, filepath.Join(q, h.Hex()))
}

// workspaceDir opens the root the store serves, for reading beneath it
// only.
func workspaceDir(store string) (*rewind.Dir, func()) {
	meta, err := workspace.ReadMeta(store)
	if err != nil {
		return nil, func() {}
	}
	fd, err := workspace.OpenRoot(meta.Root)
	if err != nil {
		return nil, func() {}
	}
	return rewind.NewDir(fd), func() { unix.Close(fd) }
}
