package main

import (
	"os"
	"strings"
	"syscall"

	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/native"
)

// ensureBLASCoreType re-executes the binary with OPENBLAS_CORETYPE=SkylakeX
// on AVX-512 CPUs. OpenBLAS reads the variable once, when the library loads,
// so it must be in the environment before start-up. Debian's OpenBLAS detects
// AMD EPYC (Zen 4) as Haswell and uses AVX2 kernels, half the sgemm speed;
// machines are also often set up with OPENBLAS_CORETYPE=Haswell for old
// OpenBLAS builds, so that value is upgraded too.
//
// Precedence, first that applies: GKCONV_OPENBLAS_CORETYPE (any core name,
// e.g. Haswell) forces that value; GKCONV_CPU_ISA forces the core type of its
// level (blasCoreType: avx2 Haswell, avx512 SkylakeX, portable Nehalem),
// replacing any OPENBLAS_CORETYPE; an explicit OPENBLAS_CORETYPE other than
// Haswell is kept; on AVX-512 CPUs the value becomes SkylakeX.
func ensureBLASCoreType() {
	if os.Getenv("GKCONV_REEXECED") != "" {
		return
	}
	want := os.Getenv("GKCONV_OPENBLAS_CORETYPE")
	cur := os.Getenv("OPENBLAS_CORETYPE")
	if l, forced := cpuisa.Forced(); want == "" && forced {
		want = blasCoreType(l)
	}
	if want == "" {
		if cur != "" && cur != "Haswell" {
			return
		}
		want = blasCoreType(cpuisa.AVX512)
	}
	if want == "" || want == cur {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	// Drop the old value: C getenv returns the first match.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "OPENBLAS_CORETYPE="+want, "GKCONV_REEXECED=1")
	// OpenBLAS starts one worker per core at load; idle workers still spin
	// on sched_yield, which costs a 1-thread benchmark on a 2-core machine.
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" {
		for _, a := range os.Args[1:] {
			if v, ok := strings.CutPrefix(a, "--numThreads="); ok {
				env = append(env, "OPENBLAS_NUM_THREADS="+v)
			}
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // on failure, run as is
}

// blasCoreType is the OpenBLAS core type of an ISA level on this CPU: ""
// for AVX-512 when the CPU lacks part of SkylakeX's AVX-512 set (OpenBLAS
// then keeps what it detects).
func blasCoreType(l cpuisa.Level) string {
	switch l {
	case cpuisa.AVX512:
		have := native.HostFlags()
		for _, f := range []string{"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"} {
			if !have[f] {
				return ""
			}
		}
		return "SkylakeX"
	case cpuisa.AVX2:
		return "Haswell"
	}
	return "Nehalem"
}
