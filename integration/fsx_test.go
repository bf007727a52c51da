package integration

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ckfs-dev/ckfs/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestFSX is a file-operation exerciser in the spirit of fsx: random
// writes at random offsets, truncations, extensions, punched holes, mmap
// writes and copy_file_range on a file in the mount, mirrored on a file in
// a native directory and compared byte for byte after every operation. Every
// so often a window boundary is taken, and a rewind to a random earlier
// checkpoint must give back exactly the mirror's saved copy.
//
// CKFS_FSX_OPS sets the number of operations (scripts/stress --long runs
// many more); CKFS_FSX_SEED the seed.
func TestFSX(t *testing.T) {
	testenv.RequireFUSE(t)
	ops, seed := 1000, uint64(1)
	if s := os.Getenv("CKFS_FSX_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("CKFS_FSX_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	m := mountInProc(t)
	defer m.unmount()
	mirrorDir := t.TempDir()
	file, mirror := filepath.Join(m.root, "f"), filepath.Join(mirrorDir, "f")
	src := make([]byte, 256<<10)
	pcg := rand.NewPCG(seed, 99)
	rng := rand.New(pcg)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for _, p := range []string{filepath.Join(m.root, "src"), filepath.Join(mirrorDir, "src")} {
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{file, mirror} {
		os.WriteFile(p, nil, 0o644)
	}
	saved := map[uint64][]byte{}
	var cps []uint64
	window := 0
	open := func() {
		window++
		if _, err := m.openWindow(fmt.Sprintf("fsx%d", window)); err != nil {
			t.Fatal(err)
		}
	}
	closeW := func() uint64 {
		seq, err := m.closeWindow(fmt.Sprintf("fsx%d", window))
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	open()
	const maxSize = 1 << 20
	for i := 0; i < ops; i++ {
		op := rng.IntN(7)
		var desc string
		do := func(p, srcPath string) error {
			switch op {
			case 0, 1: // write at a random offset (may extend)
				off, n := rng.Int64N(maxSize), 1+rng.IntN(64<<10)
				desc = fmt.Sprintf("pwrite %d@%d", n, off)
				f, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = f.WriteAt(src[:n], off)
				return err
			case 2: // truncate, shorter or longer
				size := rng.Int64N(maxSize)
				desc = fmt.Sprintf("truncate %d", size)
				return os.Truncate(p, size)
			case 3: // punch a hole
				off, n := rng.Int64N(maxSize), rng.Int64N(128<<10)+1
				desc = fmt.Sprintf("punch %d@%d", n, off)
				fd, err := unix.Open(p, unix.O_WRONLY, 0)
				if err != nil {
					return err
				}
				defer unix.Close(fd)
				return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
			case 4: // extend with fallocate
				off, n := rng.Int64N(maxSize), rng.Int64N(64<<10)+1
				desc = fmt.Sprintf("fallocate %d@%d", n, off)
				fd, err := unix.Open(p, unix.O_WRONLY, 0)
				if err != nil {
					return err
				}
				defer unix.Close(fd)
				return unix.Fallocate(fd, 0, off, n)
			case 5: // write through a shared mapping
				fd, err := unix.Open(p, unix.O_RDWR, 0)
				if err != nil {
					return err
				}
				defer unix.Close(fd)
				var st unix.Stat_t
				unix.Fstat(fd, &st)
				if st.Size == 0 {
					desc = "mmap (empty: skipped)"
					return nil
				}
				off, n := rng.Int64N(st.Size), 1+rng.IntN(8<<10)
				if off+int64(n) > st.Size {
					n = int(st.Size - off)
				}
				desc = fmt.Sprintf("mmap write %d@%d", n, off)
				mem, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
				if err != nil {
					return err
				}
				copy(mem[off:], src[:n])
				if err := unix.Msync(mem, unix.MS_SYNC); err != nil {
					return err
				}
				return unix.Munmap(mem)
			case 6: // copy_file_range from another file
				off, from, n := rng.Int64N(maxSize), rng.Int64N(int64(len(src))-1), 1+rng.IntN(64<<10)
				desc = fmt.Sprintf("copy_file_range %d from %d to %d", n, from, off)
				in, err := unix.Open(srcPath, unix.O_RDONLY, 0)
				if err != nil {
					return err
				}
				defer unix.Close(in)
				out, err := unix.Open(p, unix.O_WRONLY, 0)
				if err != nil {
					return err
				}
				defer unix.Close(out)
				for n > 0 {
					w, err := unix.CopyFileRange(in, &from, out, &off, n, 0)
					if err != nil {
						return err
					}
					if w == 0 {
						break
					}
					n -= w
				}
				return nil
			}
			return nil
		}
		// Draw the operation once and apply it to both files.
		state := *pcg
		if err := do(mirror, filepath.Join(mirrorDir, "src")); err != nil {
			t.Fatalf("op %d on the mirror (%s): %v", i, desc, err)
		}
		*pcg = state
		if err := do(file, filepath.Join(m.root, "src")); err != nil {
			t.Fatalf("op %d in the mount (%s): %v", i, desc, err)
		}
		got, _ := os.ReadFile(file)
		want, _ := os.ReadFile(mirror)
		if !bytes.Equal(got, want) {
			t.Fatalf("op %d (%s): the mounted file (%d bytes) differs from the mirror (%d bytes)", i, desc, len(got), len(want))
		}
		if i%100 == 99 { // a window boundary
			seq := closeW()
			saved[seq], cps = want, append(cps, seq)
			if len(cps) > 1 && rng.IntN(2) == 0 {
				cp := cps[rng.IntN(len(cps))]
				if _, err := m.rewindTo(cp); err != nil {
					t.Fatalf("rewind to %d after op %d: %v", cp, i, err)
				}
				got, _ := os.ReadFile(file)
				if !bytes.Equal(got, saved[cp]) {
					t.Fatalf("rewind to %d after op %d: %d bytes, want the saved %d", cp, i, len(got), len(saved[cp]))
				}
				os.WriteFile(mirror, saved[cp], 0o644)
			}
			open()
		}
	}
	closeW()
	t.Logf("%d operations, %d checkpoints, seed %d", ops, len(cps), seed)
}
