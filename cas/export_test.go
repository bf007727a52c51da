package cas

import "os"

func readFileBytes(p string) ([]byte, error) { return os.ReadFile(p) }

func replaceFile(p string, b []byte) error {
	os.Chmod(p, 0o644)
	return os.WriteFile(p, b, 0o444)
}
