package capture_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckfs-dev/ckfs/capture"
)

// BenchmarkQueueQuiet is the once-a-second sweep of a period that has
// touched many paths, all with their post-images recorded (the user's
// own burst outside any window: an npm install, a checkout). It holds the
// recorder's lock, so every request waits for it; its cost must not grow
// with the paths the period touched before.
func BenchmarkQueueQuiet(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("touched=%d", n), func(b *testing.B) {
			e := newEnv(b, nil, capture.Options{})
			for i := range n {
				if err := e.rec.BeforeChange(0, fmt.Sprintf("gen/f%05d", i)); err != nil {
					b.Fatal(err)
				}
			}
			e.rec.QueueQuiet()
			e.rec.QueueQuiet()
			e.rec.WaitPostImages()
			b.ResetTimer()
			for b.Loop() {
				e.rec.QueueQuiet()
			}
		})
	}
}

// BenchmarkBoundaryAfterABurst is the first window's open after the user
// wrote many files outside any window: the boundary checks that each
// file with a recorded post-image is unchanged, while the agent's tool
// call waits for it.
func BenchmarkBoundaryAfterABurst(b *testing.B) {
	const n = 20000
	e := newEnv(b, nil, capture.Options{})
	for d := range 20 {
		if err := os.MkdirAll(filepath.Join(e.root, fmt.Sprintf("gen/d%02d", d)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range n {
			rel := fmt.Sprintf("gen/d%02d/f%05d", j%20, j)
			done, err := e.rec.BeginChange(0, rel)
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				os.WriteFile(filepath.Join(e.root, rel), []byte("x"), 0o644)
			}
			done()
		}
		e.rec.QueueQuiet()
		e.rec.QueueQuiet()
		e.rec.WaitPostImages()
		b.StartTimer()
		e.rec.OpenWindow("w", "Bash", "")
		b.StopTimer()
		e.rec.CloseWindow("w")
	}
}
