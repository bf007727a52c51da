//go:build !linux

package capture

const oNoatime = 0
