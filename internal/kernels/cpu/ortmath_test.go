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
