package cas

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// recordSyncs records every directory made durable from now on.
func recordSyncs(t *testing.T) func() []string {
	var (
		mu  sync.Mutex
		got []string
	)
	old := syncDir
	syncDir = func(d string) error {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return old(d)
	}
	t.Cleanup(func() { syncDir = old })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(got)
		got = nil
		slices.Sort(out)
		return slices.Compact(out)
	}
}

// shardDirs returns the directories that gain an entry when h's shard is
// made: objects/, objects/ab and objects/ab/cd.
func shardDirs(l *Local, hs ...Hash) []string {
	var out []string
	for _, h := range hs {
		shard := filepath.Dir(l.Path(h))
		out = append(out, shard, filepath.Dir(shard), filepath.Dir(filepath.Dir(shard)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Deferred puts make no directory durable (an fsync of a directory per new
// shard stalls the filesystem); the next Sync makes every new shard
// directory durable with the objects.
func TestDeferredShardsAreDurableAtSync(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	synced := recordSyncs(t)
	var hs []Hash
	for i := range 5 {
		h, isNew, err := l.PutDeferred(fmt.Appendf(nil, "content %d", i))
		if err != nil || !isNew {
			t.Fatalf("PutDeferred: new %v, %v", isNew, err)
		}
		hs = append(hs, h)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("deferred puts fsynced directories before Sync: %v", got)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, want := synced(), shardDirs(l, hs...); !slices.Equal(got, want) {
		t.Fatalf("Sync made durable\n%v\nwant every directory that gained an entry\n%v", got, want)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("a second Sync with nothing pending fsynced %v", got)
	}
}

// A durable Put into a shard that a deferred put made (not synced yet)
// makes the shard's own entries durable before it returns.
func TestDurablePutIntoADeferredShard(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	first := []byte("first")
	prefix := Sum(first).Hex()[:4]
	var second []byte
	for i := 0; second == nil; i++ {
		if b := fmt.Appendf(nil, "second %d", i); Sum(b).Hex()[:4] == prefix {
			second = b
		}
	}
	synced := recordSyncs(t)
	h, _, err := l.PutDeferred(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := synced(); len(got) != 0 {
		t.Fatalf("the deferred put fsynced %v", got)
	}
	if _, _, err := l.Put(second); err != nil {
		t.Fatal(err)
	}
	if got, want := synced(), shardDirs(l, h); !slices.Equal(got, want) {
		t.Fatalf("the durable put made durable\n%v\nwant its shard and the entries leading to it\n%v", got, want)
	}
}
