package integration

import "sync"

// script is what a model stand-in answers, in order, and the requests it
// was asked; safe for the concurrent requests an agent CLI makes.
type script[R any] struct {
	mu       sync.Mutex
	replies  []R
	requests []map[string]any
}

// queue adds replies.
func (s *script[R]) queue(r ...R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// next keeps req and returns the next reply, or fallback when the script
// is done.
func (s *script[R]) next(req map[string]any, fallback R) R {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if len(s.replies) == 0 {
		return fallback
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r
}

// seen returns the requests kept so far.
func (s *script[R]) seen() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}
