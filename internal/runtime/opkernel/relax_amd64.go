package opkernel

// cpuRelax is the spin-wait hint (PAUSE): a polling thread then leaves the
// core's execution units to the other hardware thread, which on SMT
// siblings is the one doing the work.
//
//go:noescape
func cpuRelax()
