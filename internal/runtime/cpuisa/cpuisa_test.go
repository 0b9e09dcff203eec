package cpuisa

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, l := range []Level{Portable, AVX2, AVX512} {
		if got, err := Parse(l.String()); err != nil || got != l {
			t.Errorf("Parse(%q) = %v, %v", l.String(), got, err)
		}
	}
	if _, err := Parse("sse4"); err == nil || !strings.Contains(err.Error(), "avx512, avx2 or portable") {
		t.Errorf("Parse(sse4): %v", err)
	}
	for l, want := range map[Level]string{Portable: "x86-64", AVX2: "x86-64-v3", AVX512: "x86-64-v4"} {
		if l.MArch() != want {
			t.Errorf("%s.MArch() = %s, want %s", l, l.MArch(), want)
		}
	}
}

// TestForceLacking simulates an AVX2-only CPU: forcing avx512 is an error
// naming what the CPU lacks and has, and leaves the level alone; avx2 and
// portable are accepted and reach every registered code path.
func TestForceLacking(t *testing.T) {
	defer Reset() // after restore (defers run last first)
	restore := SetHostFlags(map[string]bool{"sse4_2": true, "avx": true, "avx2": true, "fma": true})
	defer restore()
	var seen []Level
	Register(func(l Level) { seen = append(seen, l) })
	defer func() { mu.Lock(); hooks = hooks[:len(hooks)-1]; mu.Unlock() }()
	Reset()
	if Detected() != AVX2 || Current() != AVX2 {
		t.Fatalf("detected %s, current %s; want avx2", Detected(), Current())
	}
	err := Force(AVX512)
	if err == nil {
		t.Fatal("forcing avx512 on an AVX2-only CPU succeeded")
	}
	for _, want := range []string{"GKCONV_CPU_ISA=avx512", "lacks avx512f", "sse4_2 avx avx2 fma"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, forced := Forced(); forced || Current() != AVX2 {
		t.Errorf("a failed Force changed the level to %s (forced %v)", Current(), forced)
	}
	t.Setenv(EnvVar, "avx512")
	if err := FromEnv(); err == nil {
		t.Error("FromEnv with GKCONV_CPU_ISA=avx512 on an AVX2-only CPU succeeded")
	}
	t.Setenv(EnvVar, "portable")
	if err := FromEnv(); err != nil {
		t.Fatal(err)
	}
	if l, forced := Forced(); !forced || l != Portable || MArch() != "x86-64" {
		t.Errorf("after GKCONV_CPU_ISA=portable: %s forced=%v march %s", l, forced, MArch())
	}
	if seen[len(seen)-1] != Portable {
		t.Errorf("hooks saw %v, want portable last", seen)
	}
}
