package cpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"gkconv/internal/kernels/cache"
	"gkconv/internal/safefs"
)

// The C compiler driver: which compiler, its identity (cached so a warm
// cache runs no compiler at all), the flags of -march, and one compile per
// distinct source through the kernel cache.

// Options configure kernel compilation.
type Options struct {
	// CC is the C compiler command (may carry arguments, e.g. "ccache gcc");
	// default $CC, then "cc".
	CC string
	// MArch is the -march value; default "native". MArchFor derives it from
	// the graph-kernel flags cpu_arch/cpu_feature/cpu_type.
	MArch string
	// CacheDir holds compiled kernels by content hash; default
	// $GKCONV_KERNEL_CACHE, then os.UserCacheDir()/gkconv/kernels. An
	// http(s) URL is a remote cache with a local one in front
	// (cache.Cache).
	CacheDir string
	// Jobs is the number of parallel compiles; default min(8, NumCPU).
	Jobs int
	// Arch and Feature are recorded in target_info and the node attrs
	// (arch x86_64|aarch64|arm, feature sse|avx|avx512|neon); default: the
	// host arch and the best feature the compiler enables for MArch.
	Arch, Feature string
	// AllowInterpreted marks bodies the generator cannot compile with
	// kernel_status=interpreted (the runtime then runs Body with its op
	// library) instead of failing the build.
	AllowInterpreted bool
}

// MArchFor maps the graph-kernel flags onto a -march value: cpu_type wins,
// then cpu_feature (x86-64 micro-architecture levels), else "native".
func MArchFor(cpuArch, cpuFeature, cpuType string) string {
	if cpuType != "" {
		return cpuType
	}
	switch cpuFeature {
	case "avx512":
		return "x86-64-v4"
	case "avx":
		return "x86-64-v3"
	case "sse":
		return "x86-64-v2"
	case "neon":
		if cpuArch == "arm" {
			return "armv7-a"
		}
		return "armv8-a"
	}
	return "native"
}

// compiler is a resolved C compiler with its identity and flags.
type compiler struct {
	argv     []string // command and its own arguments
	version  string
	march    string
	flags    []string // compile flags (without -o and files)
	libs     []string
	features []string // /proc/cpuinfo flags the generated code requires
	feature  string   // sse|avx|avx512|neon|""
}

// ccIdentity is what the cache stores about a compiler binary so that a warm
// cache needs no compiler run at all.
type ccIdentity struct {
	Version  string   `json:"version"`
	Defines  []string `json:"defines"`
	Libs     []string `json:"libs"`
	Features []string `json:"features"`
	Feature  string   `json:"feature"`
}

var ccRuns atomic.Int64 // compiler processes started (for tests)

func runCC(argv []string, args ...string) ([]byte, error) {
	ccRuns.Add(1)
	cmd := exec.Command(argv[0], append(append([]string{}, argv[1:]...), args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.Bytes(), err
}

// resolveCompiler finds the compiler and its identity, from the cache when
// the binary (path, size, mtime) and -march are unchanged.
func resolveCompiler(cc, march, cacheDir string) (*compiler, error) {
	if cc == "" {
		cc = os.Getenv("CC")
	}
	if cc == "" {
		cc = "cc"
	}
	argv := strings.Fields(cc)
	if len(argv) == 0 {
		return nil, errors.New("empty C compiler command (set CC)")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("C compiler %q not found: set the CC environment variable (or Options.CC) to a C compiler such as gcc or clang: %w", argv[0], err)
	}
	argv[0] = path
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("C compiler %s: %w", path, err)
	}
	if march == "" {
		march = "native"
	}
	c := &compiler{argv: argv, march: march}
	c.flags = []string{"-O3", "-fPIC", "-shared", "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math",
		// each IR op rounds on its own, as unfused: no a*b+c contracted into
		// an FMA the graph did not ask for (fmaf where a kernel wants one)
		"-ffp-contract=off", "-march=" + march}
	idKey := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d\x00%s", strings.Join(argv, " "), st.Size(), st.ModTime().UnixNano(), march)))
	idPath := filepath.Join(cacheDir, "cc-"+hex.EncodeToString(idKey[:12])+".json")
	var id ccIdentity
	if b, err := safefs.ReadRegular(idPath, 64<<10); err == nil && json.Unmarshal(b, &id) == nil && id.Version != "" {
		c.apply(&id)
		return c, nil
	}
	id, err = probeCompiler(c)
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(&id); err == nil {
		_ = cache.WriteAtomic(idPath, b)
	}
	c.apply(&id)
	return c, nil
}

func (c *compiler) apply(id *ccIdentity) {
	c.version = id.Version
	c.libs = id.Libs
	c.features = id.Features
	c.feature = id.Feature
	for _, d := range id.Defines {
		c.flags = append(c.flags, "-D"+d)
	}
	// With AVX-512, use it: gcc 12 tunes CPUs it does not know (Zen 5) as
	// znver3 and then vectorises with 256 bits; on bert's GeLU and softmax
	// kernels and the 16M-element ones of make bench, 512 bits gave 5-15%.
	if slices.Contains(c.features, "avx512f") {
		c.flags = append(c.flags, "-mprefer-vector-width=512")
	}
}

// probeCompiler asks the compiler for its version, the ISA macros of -march
// (mapped to /proc/cpuinfo flags the loader checks), and whether glibc's
// libmvec vector math links.
func probeCompiler(c *compiler) (ccIdentity, error) {
	var id ccIdentity
	out, err := runCC(c.argv, "--version")
	if err != nil {
		return id, fmt.Errorf("C compiler %s does not run (set CC to a working C compiler): %v: %s", c.argv[0], err, firstLine(out))
	}
	id.Version = firstLine(out)
	out, err = runCC(c.argv, "-march="+c.march, "-dM", "-E", "-x", "c", os.DevNull)
	if err != nil {
		return id, fmt.Errorf("C compiler %s rejects -march=%s: %s", c.argv[0], c.march, strings.TrimSpace(string(out)))
	}
	id.Features, id.Feature = isaFeatures(string(out))
	dir, err := safefs.MkdirTemp("", "gkconv-ccprobe-")
	if err != nil {
		return id, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "p.c")
	probe := "#include <math.h>\n" + `float expf(float) __attribute__((simd("notinbranch")));
float tanhf(float) __attribute__((simd("notinbranch")));
float erff(float) __attribute__((simd("notinbranch")));
float log1pf(float) __attribute__((simd("notinbranch")));
float expm1f(float) __attribute__((simd("notinbranch")));
void p(float *restrict y, const float *restrict x) {
#pragma omp simd
  for (int i = 0; i < 1024; i++) y[i] = expf(x[i]) + tanhf(x[i]) + erff(x[i]) + log1pf(x[i]) + expm1f(x[i]);
}
`
	if err := os.WriteFile(src, []byte(probe), 0o600); err != nil {
		return id, err
	}
	so := filepath.Join(dir, "p.so")
	args := append(append([]string{}, c.flags...), "-o", so, src, "-lmvec", "-lm")
	if _, err := runCC(c.argv, args...); err == nil {
		id.Defines = []string{"GK_MVEC", "GK_MVEC_TANH"}
		id.Libs = []string{"-lmvec", "-lm"}
		return id, nil
	}
	// Plain expf/logf vector variants are older than tanhf/erff in libmvec.
	probe2 := "#include <math.h>\n" + `float expf(float) __attribute__((simd("notinbranch")));
void p(float *restrict y, const float *restrict x) {
#pragma omp simd
  for (int i = 0; i < 1024; i++) y[i] = expf(x[i]);
}
`
	if err := os.WriteFile(src, []byte(probe2), 0o600); err == nil {
		args := append(append([]string{}, c.flags...), "-o", so, src, "-lmvec", "-lm")
		if _, err := runCC(c.argv, args...); err == nil {
			id.Defines = []string{"GK_MVEC"}
			id.Libs = []string{"-lmvec", "-lm"}
			return id, nil
		}
	}
	id.Libs = []string{"-lm"}
	return id, nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// isaMacros maps compiler ISA macros to /proc/cpuinfo flag names.
var isaMacros = map[string]string{
	"__SSE3__": "pni", "__SSSE3__": "ssse3", "__SSE4_1__": "sse4_1", "__SSE4_2__": "sse4_2",
	"__POPCNT__": "popcnt", "__AVX__": "avx", "__AVX2__": "avx2", "__FMA__": "fma", "__F16C__": "f16c",
	"__BMI__": "bmi1", "__BMI2__": "bmi2", "__LZCNT__": "abm", "__MOVBE__": "movbe",
	"__AVX512F__": "avx512f", "__AVX512CD__": "avx512cd", "__AVX512BW__": "avx512bw",
	"__AVX512DQ__": "avx512dq", "__AVX512VL__": "avx512vl", "__AVX512IFMA__": "avx512ifma",
	"__AVX512VBMI__": "avx512vbmi", "__AVX512VBMI2__": "avx512_vbmi2", "__AVX512VNNI__": "avx512_vnni",
	"__AVX512BITALG__": "avx512_bitalg", "__AVX512VPOPCNTDQ__": "avx512_vpopcntdq",
	"__AVX512BF16__": "avx512_bf16", "__AVX512FP16__": "avx512_fp16", "__AVXVNNI__": "avx_vnni",
	"__GFNI__": "gfni", "__VAES__": "vaes", "__VPCLMULQDQ__": "vpclmulqdq",
}

// isaFeatures lists the cpuinfo flags the macros require and the coarse
// MindSpore feature name.
func isaFeatures(macros string) ([]string, string) {
	set := map[string]bool{}
	for _, line := range strings.Split(macros, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "#define" {
			set[f[1]] = true
		}
	}
	var feats []string
	for m, flag := range isaMacros {
		if set[m] {
			feats = append(feats, flag)
		}
	}
	sort.Strings(feats)
	feature := ""
	switch {
	case set["__AVX512F__"]:
		feature = "avx512"
	case set["__AVX__"]:
		feature = "avx"
	case set["__SSE2__"]:
		feature = "sse"
	case set["__ARM_NEON"] || set["__ARM_NEON__"]:
		feature = "neon"
	}
	return feats, feature
}

// cacheKey is sha256(source, compiler version, flags, ISA features). The
// features are those -march enables on the compiling host: with
// -march=native, hosts with different instruction sets (sharing a remote
// cache) get different keys, so none loads an object it cannot run.
func (c *compiler) cacheKey(src string) string {
	h := sha256.New()
	h.Write([]byte(src))
	h.Write([]byte{0})
	h.Write([]byte(c.version))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(c.flags, " ") + " " + strings.Join(c.libs, " ")))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(c.features, ",")))
	return hex.EncodeToString(h.Sum(nil))
}

// soCache is the shared-object kind of the kernel cache (dir a folder or
// a remote cache's URL); counts receives the remote's work.
func soCache(dir string, counts *cache.Counts) *cache.Cache {
	return &cache.Cache{Dir: dir, Ext: ".so", Valid: isSharedObject, Counts: counts}
}

// compile returns the shared object of src, from the cache or by running the
// compiler; hit reports a cache hit.
func (c *compiler) compile(src string, objects *cache.Cache, what string) (so []byte, hit bool, err error) {
	return objects.Fetch(c.cacheKey(src), func() ([]byte, error) {
		work, err := safefs.MkdirTemp("", "gkconv-cc-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
		srcPath := filepath.Join(work, "kernel.c")
		if err := os.WriteFile(srcPath, []byte(src), 0o600); err != nil {
			return nil, err
		}
		out := filepath.Join(work, "kernel.so")
		args := append(append([]string{}, c.flags...), "-o", out, srcPath)
		args = append(args, c.libs...)
		if msg, err := runCC(c.argv, args...); err != nil {
			return nil, fmt.Errorf("%s: C compiler %s failed: %v\n%s", what, c.argv[0], err, strings.TrimSpace(string(msg)))
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return nil, err
		}
		if !isSharedObject(b) {
			return nil, fmt.Errorf("%s: compiler output is not a shared object", what)
		}
		return b, nil
	})
}

func isSharedObject(b []byte) bool {
	return len(b) > 64 && bytes.HasPrefix(b, []byte("\x7fELF"))
}

// CompilerInfo describes the C compiler CPU kernels are built with.
type CompilerInfo struct {
	Path, Version, MArch string
	// Feature is the kernels' ISA class (sse|avx|avx512|neon); Features the
	// /proc/cpuinfo flags the generated code requires.
	Feature  string
	Features []string
}

// DescribeCompiler resolves the compiler as a build would (cc "" means $CC,
// else cc) for -march=march ("" means native), without a cache.
func DescribeCompiler(cc, march string) (CompilerInfo, error) {
	c, err := resolveCompiler(cc, march, os.TempDir())
	if err != nil {
		return CompilerInfo{}, err
	}
	return CompilerInfo{Path: c.argv[0], Version: c.version, MArch: c.march, Feature: c.feature, Features: c.features}, nil
}
