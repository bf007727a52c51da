package remote

import (
	"context"
	"sync"
	"sync/atomic"
)

// uploadWorkers is how many requests a push, a restore or a mirror has in
// flight at once.
const uploadWorkers = 8

// forEach calls fn(0), ..., fn(n-1) on uploadWorkers goroutines and
// returns the first error (the others stop taking work then), or the
// context's.
func forEach(ctx context.Context, n int, fn func(i int) error) error {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		failed   atomic.Bool
	)
	for range min(uploadWorkers, n) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}
