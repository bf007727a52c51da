package capture_test

import (
	"fmt"
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
