package cas

import "os"

func readFileBytes(p string) ([]byte, error) { return os.ReadFile(p) }

func replaceFile(p string, b []byte) error {
	os.Chmod(p, 0o644)
	return os.WriteFile(p, b, 0o444)
}

// LinkOnly makes l place objects as it does where the file system cannot
// rename without replacing.
func LinkOnly(l *Local) { l.linkOnly.Store(true) }
