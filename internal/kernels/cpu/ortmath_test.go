package cpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreludeCarriesORTMath: the kernels' copy of onnxruntime's Sigmoid and
// Erf is the runtime's header, so fused and unfused models round alike.
func TestPreludeCarriesORTMath(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "runtime", "cpuisa", "gk_ort_math.h"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	start := strings.Index(h, "#define GK_ORT_MATH_H\n")
	end := strings.LastIndex(h, "#endif")
	if start < 0 || end < start {
		t.Fatal("gk_ort_math.h lost its guard")
	}
	if body := h[start+len("#define GK_ORT_MATH_H\n") : end]; body != ortMath {
		t.Fatal("internal/kernels/cpu/ortmath.go differs from internal/runtime/cpuisa/gk_ort_math.h: copy the header's body")
	}
	if !strings.Contains(prelude, ortMath) {
		t.Fatal("the prelude does not carry ortMath")
	}
}

// TestPreludeExpIsTheRuntimes: the kernels' gk_expf is the runtime's gk_exp
// statement for statement, so a fused Exp rounds as the unfused op does.
func TestPreludeExpIsTheRuntimes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "runtime", "ops", "elementwise", "fast_cgo.go"))
	if err != nil {
		t.Fatal(err)
	}
	body := func(src, sig string) string {
		i := strings.Index(src, sig)
		if i < 0 {
			t.Fatalf("%q not found", sig)
		}
		j := strings.Index(src[i:], "\n}\n")
		return src[i+len(sig) : i+j]
	}
	if body(string(b), "static inline float gk_exp(float x) {") != body(prelude, "static inline float gk_expf(float x) {") {
		t.Fatal("the prelude's gk_expf differs from the runtime's gk_exp (internal/runtime/ops/elementwise/fast_cgo.go): copy its body")
	}
}

// TestPreludeExpNonposIsExpWithoutUpperClamp: gk_expf_nonpos (the softmax
// shift's exp) is gk_expf less its upper clamp, which is a no-op on its
// arguments (<= 0 or NaN), so it gives gk_expf's bits there.
func TestPreludeExpNonposIsExpWithoutUpperClamp(t *testing.T) {
	body := func(sig string) string {
		i := strings.Index(prelude, sig)
		if i < 0 {
			t.Fatalf("%q not found", sig)
		}
		j := strings.Index(prelude[i:], "\n}\n")
		return prelude[i+len(sig) : i+j]
	}
	full := body("static inline float gk_expf(float x) {")
	const clamp = "\tc = c > 89.0f ? 89.0f : c;\n"
	if !strings.Contains(full, clamp) {
		t.Fatal("gk_expf lost its upper clamp line")
	}
	if strings.Replace(full, clamp, "", 1) != body("static inline float gk_expf_nonpos(float x) {") {
		t.Fatal("gk_expf_nonpos is not gk_expf without its upper clamp")
	}
}
