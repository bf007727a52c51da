package cas_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/ckfs-dev/ckfs/cas"
	"pgregory.net/rapid"
)

// Any mix of object files and packs, deletes, collections and a second
// store on the same directory keeps every object that was not deleted
// readable with its content, and none that was: whatever copy holds it.
func TestPacksProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s, err := cas.Open(t.TempDir(), nil)
		if err != nil {
			rt.Fatal(err)
		}
		model := map[cas.Hash][]byte{} // what the store must hold
		content := func(label string) []byte {
			n := rapid.IntRange(0, 30).Draw(rt, label)
			return bytes.Repeat([]byte(fmt.Sprintf("content %d\n", n)), 1+n%7)
		}
		pick := func(label string) (cas.Hash, bool) {
			if len(model) == 0 {
				return "", false
			}
			var hs []cas.Hash
			for h := range model {
				hs = append(hs, h)
			}
			slices.Sort(hs) // so that a draw replays
			return rapid.SampledFrom(hs).Draw(rt, label), true
		}
		for range rapid.IntRange(1, 25).Draw(rt, "ops") {
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0: // an object file
				c := content("put")
				h, _, err := s.Put(c)
				if err != nil {
					rt.Fatal(err)
				}
				model[h] = c
			case 1: // a pack
				b := s.NewPack()
				for range rapid.IntRange(1, 6).Draw(rt, "pack size") {
					c := content("packed")
					h, _, err := b.Put(c)
					if err != nil {
						rt.Fatal(err)
					}
					model[h] = c
				}
				if err := b.Commit(); err != nil {
					rt.Fatal(err)
				}
			case 2: // a delete
				if h, ok := pick("delete"); ok {
					if err := s.Delete(h); err != nil {
						rt.Fatal(err)
					}
					delete(model, h)
				}
			case 3: // a collection of some
				sw, err := s.BeginSweep(-1)
				if err != nil {
					rt.Fatal(err)
				}
				var dead []cas.Hash
				for range rapid.IntRange(0, 3).Draw(rt, "dead") {
					if h, ok := pick("dead one"); ok && !slices.Contains(dead, h) {
						dead = append(dead, h)
					}
				}
				sw.Dead(dead)
				for _, h := range dead {
					if deleted, err := sw.Delete(h); err != nil || !deleted {
						rt.Fatalf("sweep delete of %s: %v, %v", h, deleted, err)
					}
					delete(model, h)
				}
				if err := sw.SyncDirs(dead); err != nil {
					rt.Fatal(err)
				}
				sw.End()
			case 4: // a second store on the directory takes over
				if s, err = cas.Open(s.Dir(), nil); err != nil {
					rt.Fatal(err)
				}
			}
		}
		seen := 0
		if err := s.Walk(func(i cas.Info) error {
			if _, ok := model[i.Hash]; !ok {
				return fmt.Errorf("walk found %s, which was deleted", i.Hash)
			}
			seen++
			return nil
		}); err != nil {
			rt.Fatal(err)
		}
		if seen < len(model) {
			rt.Fatalf("walk found %d objects, want %d", seen, len(model))
		}
		for h, c := range model {
			if got, err := s.Get(h); err != nil || !bytes.Equal(got, c) {
				rt.Fatalf("%s: %v", h, err)
			}
		}
	})
}
