package capture

import "fmt"

// Unsettled checks that every path on QueueQuiet's list (the touched paths
// without a post-image since their last change) is one the period touched,
// and returns how long that list is.
func (r *Recorder) Unsettled() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.unclean {
		if _, ok := r.touched[p]; !ok {
			return 0, fmt.Errorf("%s is on QueueQuiet's list but not touched this period", p)
		}
	}
	return len(r.unclean), nil
}

// AfterRenamePreImages sets what runs after a rename's pre-images and
// before it counts as in flight, until the test ends.
func AfterRenamePreImages(t interface{ Cleanup(func()) }, f func()) {
	old := afterRenamePreImages
	afterRenamePreImages = f
	t.Cleanup(func() { afterRenamePreImages = old })
}
