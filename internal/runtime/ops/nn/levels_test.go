package nn

import (
	"testing"

	"gkconv/internal/runtime/cpuisa"
)

// everyLevel runs f at each ISA level this CPU has (AVX-512, AVX2,
// portable), forcing it, and restores the best level after.
func everyLevel(t *testing.T, f func(t *testing.T, lv cpuisa.Level)) {
	defer cpuisa.Reset()
	for _, lv := range []cpuisa.Level{cpuisa.AVX512, cpuisa.AVX2, cpuisa.Portable} {
		if err := cpuisa.Force(lv); err != nil {
			t.Logf("%s not tested: %v", lv, err)
			continue
		}
		f(t, lv)
	}
}
