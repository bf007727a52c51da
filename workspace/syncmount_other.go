//go:build !linux

package workspace

// syncMount does nothing where there is no syncfs: a mapping's dirty
// pages reach the daemon when the kernel writes them back.
func syncMount(string) {}
