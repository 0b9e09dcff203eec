// Package cpuisa picks the instruction-set level of the runtime's
// hand-written code paths (the packed GEMM, the packed convolution, the
// dispatching C kernels of internal/runtime/ops) and says which one runs.
//
// The level is the best the CPU has unless GKCONV_CPU_ISA (avx512, avx2,
// portable) forces a lower one, e.g. to measure the AVX2 path on an AVX-512
// machine. The same level also chooses OpenBLAS's core type (the converter's
// re-exec, cmd/converter/blasenv.go) and the -march that benchmark rebuilds
// fused kernels with (MArch).
package cpuisa

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"gkconv/internal/runtime/native"
)

// EnvVar forces the level: avx512, avx2 or portable ("" = the CPU's best).
const EnvVar = "GKCONV_CPU_ISA"

// Level is an instruction-set level. The values are those the C code uses
// (GK_ISA_* in the packages' isa.h).
type Level int

const (
	Portable Level = iota // baseline x86-64 (or any other architecture)
	AVX2                  // AVX2 and FMA
	AVX512                // AVX-512F
)

var levelNames = [...]string{Portable: "portable", AVX2: "avx2", AVX512: "avx512"}

func (l Level) String() string {
	if l >= Portable && l <= AVX512 {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// required are the /proc/cpuinfo flags a level needs.
func (l Level) required() []string {
	switch l {
	case AVX512:
		return []string{"avx512f"}
	case AVX2:
		return []string{"avx2", "fma"}
	}
	return nil
}

// MArch is the -march that generated kernels get at this level.
func (l Level) MArch() string {
	switch l {
	case AVX512:
		return "x86-64-v4"
	case AVX2:
		return "x86-64-v3"
	}
	return "x86-64"
}

// Parse reads a level name as GKCONV_CPU_ISA spells it.
func Parse(s string) (Level, error) {
	for l, name := range levelNames {
		if s == name {
			return Level(l), nil
		}
	}
	return Portable, fmt.Errorf("%s=%q: want avx512, avx2 or portable (unset: the best the CPU has)", EnvVar, s)
}

var (
	mu        sync.Mutex
	hostFlags = native.HostFlags // replaced by SetHostFlags in tests
	forced    = false
	current   Level
	hooks     []func(Level)
	envErr    error
)

func init() {
	current = detected()
	envErr = FromEnv()
}

// detected is the best level of hostFlags (mu held or not yet shared).
func detected() Level {
	have := hostFlags()
	for _, l := range []Level{AVX512, AVX2} {
		ok := true
		for _, f := range l.required() {
			ok = ok && have[f]
		}
		if ok {
			return l
		}
	}
	return Portable
}

// Detected is the best level this CPU has.
func Detected() Level {
	mu.Lock()
	defer mu.Unlock()
	return detected()
}

// Current is the level the code paths run at.
func Current() Level {
	mu.Lock()
	defer mu.Unlock()
	return current
}

// Forced says whether GKCONV_CPU_ISA (or Force) chose the level, and which.
func Forced() (Level, bool) {
	mu.Lock()
	defer mu.Unlock()
	return current, forced
}

// MArch is the -march for kernels built for this machine: the forced level's
// x86-64 micro-architecture level, else "native".
func MArch() string {
	if l, ok := Forced(); ok {
		return l.MArch()
	}
	return "native"
}

// HostFeatures lists the ISA flags of this CPU that matter to the levels.
func HostFeatures() string {
	mu.Lock()
	have := hostFlags()
	mu.Unlock()
	return features(have)
}

func features(have map[string]bool) string {
	var fs []string
	for _, f := range []string{"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"} {
		if have[f] {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return "none of sse4_2 avx avx2 fma avx512f"
	}
	return strings.Join(fs, " ")
}

// Force runs the code paths at level l; an error names the flags the CPU
// lacks (the level is then unchanged). The C code also caps the level at
// what the CPU has, so a faked flag set (SetHostFlags) cannot make it run
// instructions the CPU lacks.
func Force(l Level) error {
	if l < Portable || l > AVX512 {
		return fmt.Errorf("no ISA level %d", int(l))
	}
	mu.Lock()
	have := hostFlags()
	var missing []string
	for _, f := range l.required() {
		if !have[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		mu.Unlock()
		return fmt.Errorf("%s=%s: this CPU lacks %s (its ISA flags: %s); use a lower level or unset %s",
			EnvVar, l, strings.Join(missing, ", "), features(have), EnvVar)
	}
	current, forced = l, true
	applyLocked()
	return nil
}

// Reset goes back to the best level the CPU has (not forced).
func Reset() {
	mu.Lock()
	current, forced = detected(), false
	applyLocked()
}

// applyLocked tells every registered code path the level and unlocks mu.
func applyLocked() {
	l, hs := current, append([]func(Level){}, hooks...)
	mu.Unlock()
	for _, h := range hs {
		h(l)
	}
}

// FromEnv applies GKCONV_CPU_ISA (unset or empty: the best level); the
// error says what is wrong with its value. The package applies it once when
// it loads; the converter calls it again to report the error.
func FromEnv() error {
	v := strings.TrimSpace(os.Getenv(EnvVar))
	if v == "" {
		Reset()
		return nil
	}
	l, err := Parse(v)
	if err != nil {
		return err
	}
	return Force(l)
}

// EnvError is what was wrong with GKCONV_CPU_ISA when the package loaded.
func EnvError() error {
	mu.Lock()
	defer mu.Unlock()
	return envErr
}

// Register adds a code path's setter: it is called now with the current
// level and again whenever the level changes.
func Register(set func(Level)) {
	mu.Lock()
	hooks = append(hooks, set)
	l := current
	mu.Unlock()
	set(l)
}

// SetHostFlags replaces the CPU flags the levels are checked against (for
// tests that simulate another CPU) and returns the function that restores
// them. It does not change the current level.
func SetHostFlags(flags map[string]bool) (restore func()) {
	mu.Lock()
	old := hostFlags
	hostFlags = func() map[string]bool { return flags }
	mu.Unlock()
	return func() {
		mu.Lock()
		hostFlags = old
		mu.Unlock()
	}
}
