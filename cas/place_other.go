//go:build !linux

package cas

import "errors"

// renameNoReplace is not tried here: objects are hard-linked into place.
func renameNoReplace(oldpath, newpath string) error { return errors.ErrUnsupported }
