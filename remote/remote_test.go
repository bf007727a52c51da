package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/gc"
	"github.com/ckfs-dev/ckfs/index"
	"github.com/ckfs-dev/ckfs/internal/testenv"
	"github.com/minio/minio-go/v7"
)

// testStore is a store with a timeline of windows that each write one
// file, made through the real writer and object store, and its root.
type testStore struct {
	t     testing.TB
	dir   string
	root  string
	local *cas.Local
	w     *index.Writer
	n     int
	// packed: window stores its contents in a pack, as a batch of
	// pre-images does.
	packed bool
}

func newTestStore(t testing.TB) *testStore {
	t.Helper()
	s := &testStore{t: t, dir: t.TempDir(), root: t.TempDir()}
	var err error
	if s.local, err = cas.Open(s.dir, nil); err != nil {
		t.Fatal(err)
	}
	if s.w, _, err = index.OpenWriter(s.dir, index.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.w.Close() })
	os.WriteFile(filepath.Join(s.root, "untouched.txt"), []byte("never edited\n"), 0o644)
	return s
}

// window records a window that changes path from before to after ("" is
// absent) and leaves the file so in the root.
func (s *testStore) window(path, before, after string) string {
	s.t.Helper()
	s.n++
	id := fmt.Sprintf("call_%d", s.n)
	state := func(c string) *index.State {
		if c == "" {
			return &index.State{Type: index.TypeAbsent}
		}
		put := s.local.Put
		if s.packed {
			b := s.local.NewPack()
			defer b.Commit()
			put = b.Put
		}
		h, _, err := put([]byte(c))
		if err != nil {
			s.t.Fatal(err)
		}
		return &index.State{Type: index.TypeFile, Mode: 0o644, Size: int64(len(c)), Hash: h}
	}
	err := s.w.Append(
		&index.Record{Kind: index.KindOpen, Window: id, Tool: "Bash"},
		&index.Record{Kind: index.KindBefore, Window: id, Path: path, State: state(before)},
		&index.Record{Kind: index.KindAfter, Window: id, Path: path, State: state(after)},
		&index.Record{Kind: index.KindClose, Window: id},
	)
	if err != nil {
		s.t.Fatal(err)
	}
	p := filepath.Join(s.root, path)
	if after == "" {
		os.Remove(p)
	} else {
		os.WriteFile(p, []byte(after), 0o644)
	}
	return id
}

func (s *testStore) push(b *Bucket, ws string) (*PushResult, error) {
	return Push(context.Background(), b, PushOptions{Store: s.dir, Workspace: ws, Root: s.root, Excluded: func(string) bool { return false }})
}

// The remote tests share one SeaweedFS; each uses its own prefix.
func TestAgainstSeaweedFS(t *testing.T) {
	endpoint := testenv.SeaweedFS(t, "unit")
	t.Setenv("AWS_ACCESS_KEY_ID", "ckfs-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "ckfs-test")
	open := func(t *testing.T, endpoint string) *Bucket {
		b, err := Open(Remote{URL: "s3://unit/" + strings.ReplaceAll(t.Name(), "/", "-"), Endpoint: endpoint})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("concurrent pushes lose no record", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		for i := range 5 {
			s.window("a.txt", strings.Repeat("x", i), strings.Repeat("x", i+1))
		}
		// Four pushes of one workspace at once, while windows go on:
		// each head write is conditional, so the losers go again.
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 4 {
			wg.Go(func() {
				_, err := s.push(b, "ws1")
				errs <- err
			})
		}
		for i := range 3 {
			s.window(fmt.Sprintf("new%d.txt", i), "", "new\n")
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.push(b, "ws1"); err != nil {
			t.Fatal(err)
		}
		head, recs, err := Timeline(context.Background(), b, "ws1")
		if err != nil {
			t.Fatal(err)
		}
		local, _, _ := index.Load(filepath.Join(s.dir, index.TimelineFile))
		if len(recs) != len(local) || head.LastSeq != local[len(local)-1].Seq {
			t.Fatalf("the bucket has %d records to seq %d, the store %d", len(recs), head.LastSeq, len(local))
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "ws1", Dir: dir}); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"a.txt", "new2.txt", "untouched.txt"} {
			want, _ := os.ReadFile(filepath.Join(s.root, f))
			if got, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s restored as %q (%v), want %q", f, got, err, want)
			}
		}
	})
	t.Run("packed objects are pushed and restored", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		s.packed = true
		s.window("p.txt", "", "kept in a pack\n")
		if res, err := s.push(b, "wsP"); err != nil || res.Missing != 0 || res.Uploaded == 0 {
			t.Fatalf("push: %+v, %v", res, err)
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsP", Dir: dir}); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "p.txt")); err != nil || string(got) != "kept in a pack\n" {
			t.Errorf("p.txt restored as %q, %v", got, err)
		}
	})
	t.Run("a path as long as the kernel allows is pushed and restored", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		root, deepDir := deepTree(t, s.root)
		fifo, deep := deepDir+"fifo", deepDir+strings.Repeat("z", 255)
		if err := root.WriteFile(deep, []byte("deep\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := mkfifoIn(root, fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.push(b, "wsL"); err != nil {
			t.Fatalf("push: %v", err)
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsL", Dir: dir}); err != nil {
			t.Fatalf("restore: %v", err)
		}
		out, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if got, err := out.ReadFile(deep); err != nil || string(got) != "deep\n" {
			t.Errorf("the %d-byte path restored as %q, %v", len(deep), got, err)
		}
		if st, err := out.Lstat(deep); err != nil || st.Mode().Perm() != 0o640 {
			t.Errorf("its mode: %v, %v", st, err)
		}
		if st, err := out.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the FIFO beside it: %v, %v", st, err)
		}
	})
	t.Run("retention per workspace", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		for i := range 6 {
			s.window("a.txt", strings.Repeat("v", i), strings.Repeat("v", i+1))
		}
		if _, err := s.push(b, "wsR"); err != nil {
			t.Fatal(err)
		}
		dry, err := Collect(context.Background(), b, CollectOptions{Policy: gc.Policy{Keep: 2}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if head, _, _ := b.readHead(context.Background(), "wsR"); dry.Watermarks["wsR"] == 0 || head.Watermark != 0 {
			t.Fatalf("a dry run: would move to %d, head now %d", dry.Watermarks["wsR"], head.Watermark)
		}
		res, err := Collect(context.Background(), b, CollectOptions{Policy: gc.Policy{Keep: 2}})
		if err != nil {
			t.Fatal(err)
		}
		w := res.Watermarks["wsR"]
		if w != dry.Watermarks["wsR"] {
			t.Fatalf("the dry run said %d, the collection moved to %d", dry.Watermarks["wsR"], w)
		}
		if w == 0 {
			t.Fatalf("keep 2 of 6 checkpoints moved no watermark: %+v", res)
		}
		_, err = Restore(context.Background(), b, RestoreOptions{Workspace: "wsR", Checkpoint: "call_1", Dir: filepath.Join(t.TempDir(), "old")})
		if err == nil || !strings.Contains(err.Error(), "no longer restorable") {
			t.Fatalf("restore below the watermark %d: %v", w, err)
		}
		dir := filepath.Join(t.TempDir(), "kept")
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsR", Checkpoint: "call_5", Dir: dir}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "vvvv" {
			t.Fatalf("a.txt before call_5 restored as %q", got)
		}
	})
	t.Run("a restore never writes outside its directory", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		outside := t.TempDir()
		// A damaged timeline says lib is a symlink out of the tree and
		// lib/x a file: the restore lists lib/x and writes nothing
		// through lib.
		target, _, _ := s.local.Put([]byte(outside))
		x, _, _ := s.local.Put([]byte("escaped\n"))
		err := s.w.Append(
			&index.Record{Kind: index.KindOpen, Window: "bad", Tool: "Bash"},
			&index.Record{Kind: index.KindAfter, Window: "bad", Path: "lib", State: &index.State{Type: index.TypeSymlink, Mode: 0o777, Size: int64(len(outside)), Hash: target}},
			&index.Record{Kind: index.KindAfter, Window: "bad", Path: "lib/x", State: &index.State{Type: index.TypeFile, Mode: 0o4755, Size: 8, Hash: x}},
			&index.Record{Kind: index.KindAfter, Window: "bad", Path: "tool", State: &index.State{Type: index.TypeFile, Mode: 0o4755, Size: 8, Hash: x}},
			&index.Record{Kind: index.KindClose, Window: "bad"},
		)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.push(b, "wsE"); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "out")
		_, err = Restore(context.Background(), b, RestoreOptions{Workspace: "wsE", Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "below lib, which is a symlink") {
			t.Fatalf("restore of a path below a symlink: %v", err)
		}
		res, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsE", Dir: dir, Partial: true})
		if err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("the restore wrote outside its directory: %v", ents)
		}
		if target, _ := os.Readlink(filepath.Join(dir, "lib")); target != outside || len(res.Left) != 1 {
			t.Fatalf("lib -> %q, left %v", target, res.Left)
		}
		if st, err := os.Stat(filepath.Join(dir, "tool")); err != nil || st.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 || st.Mode().Perm() != 0o755 {
			t.Fatalf("tool restored with mode %v (%v): setuid must not be restored", st.Mode(), err)
		}
	})
	t.Run("a checkpoint collected before the push is refused by name", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		for i := range 3 {
			s.window("a.txt", strings.Repeat("v", i), strings.Repeat("v", i+1))
		}
		w := uint64(5) // the local collection kept checkpoints from call_2 on
		if err := s.w.Append(&index.Record{Kind: index.KindWatermark, Target: &w, Reason: "keep the last 2 checkpoints"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.push(b, "wsW"); err != nil {
			t.Fatal(err)
		}
		_, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsW", Checkpoint: "call_1", Dir: filepath.Join(t.TempDir(), "x")})
		if err == nil || !strings.Contains(err.Error(), "no longer restorable") {
			t.Fatalf("restore below the local watermark: %v", err)
		}
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsW", Checkpoint: "call_2", Dir: filepath.Join(t.TempDir(), "y")}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a push refuses a timeline changed under the bucket", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		for i := range 3 {
			s.window("a.txt", strings.Repeat("v", i), strings.Repeat("v", i+1))
		}
		if _, err := s.push(b, "wsT"); err != nil {
			t.Fatal(err)
		}
		s.window("b.txt", "", "b\n")
		if res, err := s.push(b, "wsT"); err != nil || res.Records != 4 {
			t.Fatalf("second push: %+v, %v", res, err)
		}
		// A repair took the first line out: every later byte moved.
		path := filepath.Join(s.dir, index.TimelineFile)
		data, _ := os.ReadFile(path)
		os.WriteFile(path, data[bytes.IndexByte(data, '\n')+1:], 0o600)
		s.window("c.txt", "", "c\n")
		if _, err := s.push(b, "wsT"); err == nil || !strings.Contains(err.Error(), "no longer holds the bytes pushed") {
			t.Fatalf("push over a changed timeline: %v", err)
		}
	})
	t.Run("a damaged object in the bucket is never restored", func(t *testing.T) {
		b := open(t, endpoint)
		s := newTestStore(t)
		s.window("a.txt", "", "the content that must come back whole\n")
		if _, err := s.push(b, "ws2"); err != nil {
			t.Fatal(err)
		}
		h := cas.Sum([]byte("the content that must come back whole\n"))
		key := b.prefix + objectKey(h)
		o, err := b.c.GetObject(context.Background(), b.bucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(o)
		raw[len(raw)-3] ^= 1
		if _, err := b.c.PutObject(context.Background(), b.bucket, key, bytes.NewReader(raw), int64(len(raw)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "out")
		_, err = Restore(context.Background(), b, RestoreOptions{Workspace: "ws2", Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "damaged in the bucket") || !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("restore of a damaged object: %v", err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("a failed restore left %s behind: %v", dir, err)
		}
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".ckfs-restore-*"))
		if len(matches) > 0 {
			t.Fatalf("a failed restore left its staging directory: %v", matches)
		}
	})
	t.Run("two writers and a collector together", func(t *testing.T) {
		t.Setenv("CKFS_TEST_REMOTE_GRACE", "15s") // a third of it (5 s) bounds each push and collection, even on a loaded machine
		b := open(t, endpoint)
		shared := func(s *testStore) {
			for i := range 10 {
				s.window(fmt.Sprintf("shared%d.txt", i), "", fmt.Sprintf("content every workspace has %d\n", i))
			}
		}
		a := newTestStore(t)
		shared(a)
		a.window("a-only.txt", "", "only workspace a has this\n")
		if _, err := a.push(b, "wsA"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(16 * time.Second) // a's objects are now older than the grace period
		// What keeps a collector that has not seen a head from deleting
		// what it names: a push renews every old object it finds, so all
		// a new head names is younger than a third of the grace period.
		x := newTestStore(t)
		shared(x)
		if _, err := x.push(b, "wsX"); err != nil {
			t.Fatal(err)
		}
		_, recs, err := Timeline(context.Background(), b, "wsX")
		if err != nil {
			t.Fatal(err)
		}
		for h := range index.Live(recs, 0) {
			a, _ := cas.ParseHash(string(h))
			if _, mod, err := b.stat(context.Background(), objectKey(a)); err != nil || time.Since(mod) > Grace()/3 {
				t.Fatalf("object %s, named by a head just written, was last written %s ago (%v): an old object was not renewed", a, time.Since(mod).Round(time.Second), err)
			}
		}
		writers := []*testStore{newTestStore(t), newTestStore(t)}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for k, s := range writers {
			wg.Go(func() {
				shared(s)
				for round := range 3 {
					s.window(fmt.Sprintf("w%d-round%d.txt", k, round), "", fmt.Sprintf("writer %d round %d\n", k, round))
					if _, err := s.push(b, fmt.Sprintf("ws%d", k)); err != nil {
						errs <- err
					}
				}
			})
		}
		var dropped []string
		wg.Go(func() {
			for range 3 {
				res, err := Collect(context.Background(), b, CollectOptions{DropAfter: 8 * time.Second})
				if err != nil && !strings.Contains(err.Error(), "being collected") {
					errs <- err
				}
				if res != nil {
					dropped = append(dropped, res.Dropped...)
				}
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if !slices.Contains(dropped, "wsA") || slices.Contains(dropped, "ws0") || slices.Contains(dropped, "ws1") {
			t.Fatalf("dropped %v: want wsA (idle), never the writers", dropped)
		}
		if _, err := Collect(context.Background(), b, CollectOptions{}); err != nil {
			t.Fatal(err)
		}
		if ok, _, _ := b.stat(context.Background(), objectKey(cas.Sum([]byte("only workspace a has this\n")))); ok {
			t.Error("the object only the dropped workspace needed is still there")
		}
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsA", Dir: filepath.Join(t.TempDir(), "a")}); err == nil || !strings.Contains(err.Error(), "was dropped") {
			t.Errorf("restore of the dropped workspace: %v", err)
		}
		// It comes back: a push starts it over, whole.
		a.window("a-again.txt", "", "back\n")
		if _, err := a.push(b, "wsA"); err != nil {
			t.Fatal(err)
		}
		dirA := filepath.Join(t.TempDir(), "a2")
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "wsA", Dir: dirA}); err != nil {
			t.Fatalf("restore of the workspace pushed again: %v", err)
		}
		if got, _ := os.ReadFile(filepath.Join(dirA, "a-only.txt")); string(got) != "only workspace a has this\n" {
			t.Errorf("a-only.txt after the workspace came back: %q", got)
		}
		for k, s := range writers {
			for _, cp := range []string{"", "call_5", "call_11"} {
				dir := filepath.Join(t.TempDir(), "out")
				if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: fmt.Sprintf("ws%d", k), Checkpoint: cp, Dir: dir}); err != nil {
					t.Fatalf("writer %d, checkpoint %q, after the collections: %v", k, cp, err)
				}
			}
			dir := filepath.Join(t.TempDir(), "last")
			Restore(context.Background(), b, RestoreOptions{Workspace: fmt.Sprintf("ws%d", k), Dir: dir})
			for _, name := range []string{"shared3.txt", fmt.Sprintf("w%d-round2.txt", k), "untouched.txt"} {
				want, _ := os.ReadFile(filepath.Join(s.root, name))
				if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("writer %d: %s restored as %q (%v), want %q", k, name, got, err, want)
				}
			}
		}
	})
	t.Run("push and restore through a faulty network", func(t *testing.T) {
		proxy := newFaultProxy(t, endpoint)
		b := open(t, proxy.url)
		s := newTestStore(t)
		for i := range 20 {
			s.window(fmt.Sprintf("f%02d.txt", i), "", strings.Repeat(fmt.Sprintf("line %d\n", i), 50+i))
		}
		proxy.faulty.Store(true)
		if _, err := s.push(b, "ws3"); err != nil {
			t.Fatalf("push through the faults: %v (faults injected: %d)", err, proxy.injected.Load())
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := Restore(context.Background(), b, RestoreOptions{Workspace: "ws3", Dir: dir}); err != nil {
			t.Fatalf("restore through the faults: %v", err)
		}
		for i := range 20 {
			name := fmt.Sprintf("f%02d.txt", i)
			want, _ := os.ReadFile(filepath.Join(s.root, name))
			if got, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(got, want) {
				t.Fatalf("%s restored wrong through the faults", name)
			}
		}
		if proxy.injected.Load() == 0 {
			t.Fatal("the proxy injected no fault")
		}
		t.Logf("faults injected: %d", proxy.injected.Load())
	})
}

// faultProxy stands between ckfs and the S3 server and, when faulty, spoils
// every fourth request in turn: a 503, a dropped connection, a truncated
// body, or a delay.
type faultProxy struct {
	url      string
	faulty   atomic.Bool
	n        atomic.Int64
	injected atomic.Int64
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // the faults are on purpose
	p := &faultProxy{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := p.n.Add(1)
		if !p.faulty.Load() || n%4 != 0 {
			rp.ServeHTTP(w, r)
			return
		}
		p.injected.Add(1)
		switch (n / 4) % 4 {
		case 0:
			http.Error(w, "injected", http.StatusServiceUnavailable)
		case 1:
			if hj, ok := w.(http.Hijacker); ok {
				c, _, _ := hj.Hijack()
				c.Close()
			}
		case 2:
			// The real answer, cut short.
			rec := &truncator{ResponseWriter: w}
			rp.ServeHTTP(rec, r)
		case 3:
			time.Sleep(300 * time.Millisecond) // slow is not wrong
			rp.ServeHTTP(w, r)
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	p.url = "http://" + l.Addr().String()
	return p
}

// truncator passes the first half of a body, then drops the connection.
type truncator struct {
	http.ResponseWriter
	written int
}

func (t *truncator) Write(b []byte) (int, error) {
	if t.written > 0 || len(b) < 2 {
		panic(http.ErrAbortHandler)
	}
	t.written += len(b) / 2
	t.ResponseWriter.Write(b[:len(b)/2])
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}
