package integration

import "sync"

// script is what a model stand-in answers, in order, and the requests it
// was asked; safe for the concurrent requests an agent CLI makes.
type script[R any] struct {
	mu       sync.Mutex
	replies  []R
	routes   []route[R]
	requests []map[string]any
}

// route is a queue of its own for the requests when picks (a subagent's,
// which run beside the main conversation's in any order).
type route[R any] struct {
	when    func(req map[string]any) bool
	replies []R
}

// queueWhen adds replies that only requests for which when holds get,
// before the main queue.
func (s *script[R]) queueWhen(when func(req map[string]any) bool, r ...R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = append(s.routes, route[R]{when, r})
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
	for i := range s.routes {
		if rt := &s.routes[i]; len(rt.replies) > 0 && rt.when(req) {
			r := rt.replies[0]
			rt.replies = rt.replies[1:]
			return r
		}
	}
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
