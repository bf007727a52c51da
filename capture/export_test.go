package capture

import "fmt"

// Unsettled checks that every path the period touched is either clean
// (its post-image recorded, untouched since) or on the list QueueQuiet
// walks, never both, and returns how long that list is.
func (r *Recorder) Unsettled() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.touched {
		_, unclean := r.unclean[p]
		if r.clean[p] == unclean {
			return 0, fmt.Errorf("%s: clean %v, on QueueQuiet's list %v", p, r.clean[p], unclean)
		}
	}
	return len(r.unclean), nil
}
