package rewind

import (
	"errors"
	"fmt"

	"github.com/ckfs-dev/ckfs/cas"
	"github.com/ckfs-dev/ckfs/index"
)

// Stored content is checked before anything is written. A rewind that
// would reach a damaged or missing object half way through would leave the
// workspace part rewound; worse, one whose undo content is damaged would
// destroy the only good copy of a file. So every object the plan writes is
// read and verified in full first, and the check refuses (it cannot be
// forced) when any does not verify.

// objectCheck verifies every object the steps write.
func objectCheck(store cas.Store, steps []Step) Check {
	bad := badObjects(store, steps, func(s Step) index.State { return s.Target })
	return Check{Name: "stored content", OK: len(bad) == 0, Paths: bad,
		Detail: pick(len(bad) == 0, "every object the rewind writes is present and verifies",
			"content the rewind needs is damaged or missing from the store, so nothing was written: run ckfs verify --repair (it recovers an object from any file that still holds its content), then run the rewind again")}
}

// badObjects verifies the object of state(s) for every step that writes
// content, once per object, and lists the failures.
func badObjects(store cas.Store, steps []Step, state func(Step) index.State) []string {
	var bad []string
	seen := map[index.Hash]bool{}
	check := func(path string, h index.Hash, what string) {
		if h == "" || seen[h] {
			return
		}
		seen[h] = true
		if err := store.Verify(h); err != nil {
			bad = append(bad, fmt.Sprintf("%s%s (%s): %s", index.Display(path), what, h, objectProblem(err)))
		}
	}
	for _, s := range steps {
		st := state(s)
		if st.Type == index.TypeFile || st.Type == index.TypeSymlink {
			check(s.Path, st.Hash, "")
		}
		check(s.Path, st.XAttrs, " extended attributes")
	}
	return bad
}

func objectProblem(err error) string {
	switch {
	case errors.Is(err, cas.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, cas.ErrNotFound):
		return "missing"
	}
	return err.Error()
}

// ObjectError means content a rewind or rollback needs does not verify;
// nothing was written.
type ObjectError struct {
	What string
	Bad  []string
}

func (e *ObjectError) Error() string {
	s := fmt.Sprintf("%s refused; nothing was changed: content it needs is damaged or missing from the store:", e.What)
	for _, b := range e.Bad {
		s += "\n  " + b
	}
	return s + "\nrun ckfs verify --repair (it recovers an object from any file that still holds its content), then try again"
}

func (e *ObjectError) Unwrap() error { return ErrRefused }
