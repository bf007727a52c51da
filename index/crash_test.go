package index_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// TestCrashKill kills a process that stores objects and appends records in
// a loop with SIGKILL at random moments, 50 times, and checks the store
// after each kill: every object verifies, the timeline reads up to its last
// complete line once the writer has repaired the tail, and every record's
// object exists.
func TestCrashKill(t *testing.T) {
	if os.Getenv("CKFS_CRASH_CHILD") != "" {
		return
	}
	kills := 50
	if testing.Short() {
		kills = 10
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	totalRecords, repairs := 0, 0
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=TestCrashChild$")
		cmd.Env = append(os.Environ(), "CKFS_CRASH_CHILD="+dir, "CKFS_CRASH_SEED="+strconv.Itoa(i))
		var out bytes.Buffer
		cmd.Stderr = &out
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child is writing, then kill it at a random moment.
		ready := make([]byte, 6)
		if _, err := io.ReadFull(stdout, ready); err != nil || string(ready) != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("kill %d: child did not start: %q %v: %s", i, ready, err, out.String())
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("kill %d: child was not killed (%v): %s", i, err, out.String())
		}
		w, rep, err := index.OpenWriter(dir, index.WriterOptions{})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", i, err)
		}
		if rep != nil {
			repairs++
		}
		w.Close()
		n, err := checkStore(dir)
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		totalRecords = n
	}
	t.Logf("%d kills, %d torn tails repaired, %d records survived", kills, repairs, totalRecords)
	if totalRecords == 0 {
		t.Fatal("the child never appended a record: the test exercised nothing")
	}
}

func checkStore(dir string) (int, error) {
	s, err := cas.Open(dir, nil)
	if err != nil {
		return 0, err
	}
	err = s.Walk(func(i cas.Info) error {
		_, err := s.Get(i.Hash)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("object does not verify: %w", err)
	}
	recs, tail, err := index.Load(filepath.Join(dir, index.TimelineFile))
	if err != nil {
		return 0, err
	}
	if tail != nil {
		return 0, fmt.Errorf("timeline has a bad line after repair: %v", tail)
	}
	for _, r := range recs {
		if r.State == nil || r.Hash == "" {
			continue
		}
		h, err := cas.ParseHash(string(r.Hash))
		if err != nil {
			return 0, err
		}
		if ok, _ := s.Has(h); !ok {
			return 0, fmt.Errorf("record %d names missing object %s", r.Seq, h)
		}
	}
	return len(recs), nil
}

// TestCrashChild is the child process of TestCrashKill.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CKFS_CRASH_CHILD")
	if dir == "" {
		t.Skip("child of TestCrashKill")
	}
	seed, _ := strconv.Atoi(os.Getenv("CKFS_CRASH_SEED"))
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	s, err := cas.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The previous child may still hold the lock for an instant after it
	// was killed; the kernel drops it when the process is gone.
	var w *index.Writer
	for {
		w, _, err = index.OpenWriter(dir, index.WriterOptions{})
		if !errors.Is(err, index.ErrLocked) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	for i := 0; ; i++ {
		win := fmt.Sprintf("c%d-%d", seed, i)
		size := 1 + rng.IntN(64<<10)
		if i%10 == 9 {
			size = 3 << 20 // a streamed object now and then
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		h, _, err := s.PutReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		st := &index.State{Hash: h, Size: int64(size), Mode: 0o644, Type: index.TypeFile}
		err = w.Append(
			&index.Record{Kind: index.KindOpen, Window: win},
			&index.Record{Kind: index.KindBefore, Window: win, Path: "f" + strconv.Itoa(i%7), State: st},
			&index.Record{Kind: index.KindClose, Window: win},
		)
		if err != nil {
			t.Fatal(err)
		}
	}
}
