//go:build cgo && amd64

package native

/*
#include <cpuid.h>

// gk_has_lzcnt: CPUID 0x80000001 ECX bit 5 (LZCNT, the flag Linux calls abm).
static int gk_has_lzcnt(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000001, &a, &b, &c, &d)) return 0;
  return (c >> 5) & 1;
}
*/
import "C"

// cpuidFlags are cpuinfo flags read from CPUID itself, for those a host's
// /proc/cpuinfo may leave out although the CPU has them: some hypervisors'
// cpuinfo (seen on a Firecracker guest on AMD EPYC) omits "abm" while CPUID
// reports LZCNT, and the compiler (-march=native, x86-64-v3/v4) emits lzcnt.
func cpuidFlags() []string {
	if C.gk_has_lzcnt() != 0 {
		return []string{"abm"}
	}
	return nil
}
