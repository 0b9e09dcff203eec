package native

import (
	"strings"
	"testing"
)

func TestCheckHost(t *testing.T) {
	have := parseCPUFlags("processor : 0\nflags : fpu sse2 avx avx2 fma\nprocessor : 1\nflags : other\n")
	if !have["avx2"] || have["other"] {
		t.Fatalf("flags %v: want the first core's", have)
	}
	if err := checkHost("x86_64", "avx", "avx2,fma", "x86_64", have); err != nil {
		t.Errorf("supported kernel refused: %v", err)
	}
	if err := checkHost("aarch64", "", "", "x86_64", have); err == nil || !strings.Contains(err.Error(), "aarch64") {
		t.Errorf("other arch: err = %v", err)
	}
	if err := checkHost("x86_64", "avx512", "avx512bw", "x86_64", have); err == nil ||
		!strings.Contains(err.Error(), "avx512f") || !strings.Contains(err.Error(), "avx512bw") {
		t.Errorf("missing ISA: err = %v", err)
	}
	if err := checkHost("", "avx512", "avx512bw", "x86_64", nil); err != nil {
		t.Errorf("no cpuinfo: err = %v, want nothing checked", err)
	}
}
