package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A Go program built without cgo starts without a loader; one built with
// cgo, or a C program, through one; a file that is not ELF is not called
// dynamic.
func TestDynamic(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n"), 0o644)
	build := exec.Command("go", "build", "-o", "static", ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if dynamic(filepath.Join(dir, "static")) {
		t.Error("a static Go program is called dynamic")
	}
	if dynamic(filepath.Join(dir, "main.go")) {
		t.Error("a text file is called dynamic")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler: cannot build a program with cgo to compare with")
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"C\"\n\nfunc main() {}\n"), 0o644)
	build = exec.Command("go", "build", "-o", "cgo", ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if !dynamic(filepath.Join(dir, "cgo")) {
		t.Error("a program built with cgo is not called dynamic")
	}
}
