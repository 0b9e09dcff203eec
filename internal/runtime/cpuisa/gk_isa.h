#ifndef GKCONV_GK_ISA_H
#define GKCONV_GK_ISA_H
// Forcible instruction-set dispatch for the runtime's C code, shared by the
// cgo packages under internal/runtime/ops (included with
// -I${SRCDIR}/../../cpuisa). The go command does not see this file as an
// input of those packages: after changing it, rebuild them with go build -a
// (or touch their isa files).
//
// Levels are cpuisa.Level's values: 0 portable, 1 AVX2 with FMA, 2 AVX-512F.
enum { GK_ISA_PORTABLE = 0, GK_ISA_AVX2 = 1, GK_ISA_AVX512 = 2 };

// gk_isa_best is the best level the CPU has.
static inline int gk_isa_best(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return GK_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return GK_ISA_AVX2;
    return GK_ISA_PORTABLE;
}

// GK_ISA_LEVEL(prefix) defines int prefix_isa(void), the level in use (the
// best until set), and void prefix_set_isa(int), which sets it, capped at
// the best (so no setting can run instructions the CPU lacks).
#define GK_ISA_LEVEL(prefix)                                                   \
    static int prefix##_level = -1;                                            \
    int prefix##_isa(void) {                                                   \
        int v = __atomic_load_n(&prefix##_level, __ATOMIC_RELAXED);            \
        if (v < 0) {                                                           \
            v = gk_isa_best();                                                 \
            __atomic_store_n(&prefix##_level, v, __ATOMIC_RELAXED);            \
        }                                                                      \
        return v;                                                              \
    }                                                                          \
    void prefix##_set_isa(int want) {                                          \
        int best = gk_isa_best();                                              \
        if (want < GK_ISA_PORTABLE || want > best) want = best;                \
        __atomic_store_n(&prefix##_level, want, __ATOMIC_RELAXED);             \
    }

// GK_ISA_VARIANTS(level, name, (params), (args)) compiles the always-inline
// function name##_body (declared GK_ISA_BODY void name##_body params) for
// AVX-512F, AVX2 and the baseline, as target_clones("avx512f", "avx2",
// "default") would, and defines void name params, which runs the variant of
// the int expression level. Unlike target_clones' load-time choice, the
// level can be forced lower than the CPU's best.
#define GK_ISA_BODY static inline __attribute__((always_inline))
#define GK_ISA_VARIANTS(level, name, params, args)                              \
    GK_ISA_VARIANTS_TARGETS(level, name, params, args, "avx512f", "avx2")

// GK_ISA_VARIANTS_FMA is GK_ISA_VARIANTS with FMA enabled in the AVX-512
// and AVX2 variants (both levels imply it: cpuisa requires fma for AVX2 and
// every AVX-512F CPU has it), so a*b+c on GCC vector types of any width
// becomes a fused multiply-add there; the baseline variant keeps mul + add.
#define GK_ISA_VARIANTS_FMA(level, name, params, args)                          \
    GK_ISA_VARIANTS_TARGETS(level, name, params, args, "avx512f,fma", "avx2,fma")

#define GK_ISA_VARIANTS_TARGETS(level, name, params, args, t512, t2)            \
    __attribute__((target(t512))) static void name##_avx512 params {           \
        name##_body args;                                                      \
    }                                                                          \
    __attribute__((target(t2))) static void name##_avx2 params {               \
        name##_body args;                                                      \
    }                                                                          \
    static void name##_base params { name##_body args; }                       \
    void name params {                                                         \
        switch (level) {                                                       \
        case GK_ISA_AVX512: name##_avx512 args; break;                         \
        case GK_ISA_AVX2: name##_avx2 args; break;                             \
        default: name##_base args; break;                                      \
        }                                                                      \
    }
#endif
