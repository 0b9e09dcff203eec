package nn

// #include "dwconv_rows.h"
import "C"

// setDwLegacy makes the depthwise convolution take its previous stride-1
// paths (for same-run A/B benchmarks) or the current ones.
func setDwLegacy(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.dw_legacy = C.int(v)
}
