//go:build !amd64

package opkernel

// cpuRelax: no spin-wait hint off x86-64.
func cpuRelax() {}
