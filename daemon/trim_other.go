//go:build !linux

package daemon

// trimBinaryPages does nothing where there is no /proc/self/maps.
func trimBinaryPages() {}
