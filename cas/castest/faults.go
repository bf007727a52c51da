package castest

import (
	"errors"
	"io"
	"sync"

	"github.com/ckfs-dev/ckfs/cas"
)

// ErrInjected is the error returned by injected failures.
var ErrInjected = errors.New("injected fault")

// Faults injects I/O faults below a store: plug Writer and Reader into
// cas.Options. Each knob applies to every file until it is changed.
type Faults struct {
	mu         sync.Mutex
	failWrites bool // every write fails with ErrInjected
	shortWrite bool // every write reports writing half of its bytes
	flipRead   bool // one bit of every read is flipped
}

// FailWrites makes every object write fail (true) or succeed (false).
func (f *Faults) FailWrites(on bool) { f.mu.Lock(); f.failWrites = on; f.mu.Unlock() }

// ShortWrites makes every object write write only half its bytes and
// report so without an error, as a broken filesystem might.
func (f *Faults) ShortWrites(on bool) { f.mu.Lock(); f.shortWrite = on; f.mu.Unlock() }

// FlipReads flips one bit in every read of an object file.
func (f *Faults) FlipReads(on bool) { f.mu.Lock(); f.flipRead = on; f.mu.Unlock() }

// Options returns cas.Options that route object I/O through f.
func (f *Faults) Options() *cas.Options {
	return &cas.Options{WrapWriter: f.Writer, WrapReader: f.Reader}
}

// Writer wraps w with the write faults.
func (f *Faults) Writer(w io.Writer) io.Writer { return &faultWriter{f, w} }

// Reader wraps r with the read faults.
func (f *Faults) Reader(r io.Reader) io.Reader { return &faultReader{f, r} }

type faultWriter struct {
	f *Faults
	w io.Writer
}

func (w *faultWriter) Write(p []byte) (int, error) {
	w.f.mu.Lock()
	fail, short := w.f.failWrites, w.f.shortWrite
	w.f.mu.Unlock()
	if fail {
		return 0, ErrInjected
	}
	if short && len(p) > 1 {
		n, err := w.w.Write(p[:len(p)/2])
		return n, err
	}
	return w.w.Write(p)
}

type faultReader struct {
	f *Faults
	r io.Reader
}

func (r *faultReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.f.mu.Lock()
	flip := r.f.flipRead
	r.f.mu.Unlock()
	if flip && n > 0 {
		p[n-1] ^= 0x10
	}
	return n, err
}

// FaultyStore wraps a Store and fails chosen operations with ErrInjected.
// Higher layers use it to prove that a store failure stops them cleanly.
type FaultyStore struct {
	cas.Store
	mu      sync.Mutex
	failPut bool
	failGet bool
}

// FailPut makes Put and PutReader fail (true) or pass through (false).
func (s *FaultyStore) FailPut(on bool) { s.mu.Lock(); s.failPut = on; s.mu.Unlock() }

// FailGet makes Get and Open fail (true) or pass through (false).
func (s *FaultyStore) FailGet(on bool) { s.mu.Lock(); s.failGet = on; s.mu.Unlock() }

func (s *FaultyStore) putFails() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.failPut }
func (s *FaultyStore) getFails() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.failGet }

func (s *FaultyStore) Put(data []byte) (cas.Hash, bool, error) {
	if s.putFails() {
		return "", false, ErrInjected
	}
	return s.Store.Put(data)
}

func (s *FaultyStore) PutReader(r io.Reader) (cas.Hash, bool, error) {
	if s.putFails() {
		return "", false, ErrInjected
	}
	return s.Store.PutReader(r)
}

func (s *FaultyStore) Get(h cas.Hash) ([]byte, error) {
	if s.getFails() {
		return nil, ErrInjected
	}
	return s.Store.Get(h)
}

func (s *FaultyStore) Verify(h cas.Hash) error {
	if s.getFails() {
		return ErrInjected
	}
	return s.Store.Verify(h)
}

func (s *FaultyStore) Open(h cas.Hash) (io.ReadCloser, error) {
	if s.getFails() {
		return nil, ErrInjected
	}
	return s.Store.Open(h)
}
