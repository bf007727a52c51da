package cas_test

import (
	"fmt"
	"os"

	"github.com/ckfs-dev/ckfs/cas"
)

// An object is stored once under the BLAKE3 hash of its content, and read
// back only if it still hashes to its name.
func Example() {
	dir, _ := os.MkdirTemp("", "cas-example-")
	defer os.RemoveAll(dir)
	s, err := cas.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	h, isNew, _ := s.Put([]byte("package main\n"))
	_, again, _ := s.Put([]byte("package main\n"))
	b, _ := s.Get(h)
	fmt.Println(h == cas.Sum([]byte("package main\n")), isNew, again)
	fmt.Printf("%q\n", b)
	// Output:
	// true true false
	// "package main\n"
}
