//go:build !cgo || !amd64

package native

// cpuidFlags: nothing beyond /proc/cpuinfo without cgo or off x86-64.
func cpuidFlags() []string { return nil }
