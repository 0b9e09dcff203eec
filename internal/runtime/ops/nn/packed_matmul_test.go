package nn

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// refPackedMatMul is op(A) x B in float64: A [..., k] (or transA: [..., k, m]),
// B row-major [k, n].
func refPackedMatMul(a []float32, aShape []int64, transA bool, b []float32, k, n int) []float64 {
	r := len(aShape)
	batch, m := 1, prod(aShape[:r-1])
	if transA && r >= 2 {
		batch, m = prod(aShape[:r-2]), int(aShape[r-1])
	}
	out := make([]float64, batch*m*n)
	for t := 0; t < batch; t++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for q := 0; q < k; q++ {
					av := a[t*m*k+i*k+q]
					if transA && r >= 2 {
						av = a[t*m*k+q*m+i]
					}
					s += float64(av) * float64(b[q*n+j])
				}
				out[t*m*n+i*n+j] = s
			}
		}
	}
	return out
}

// packedNode is a MatMul node for packedMatMul; attrs k, n and nr describe
// the packed B passed as its second input (a test convention only).
func packedNode(k, n, nr int, transA bool) *ir.Node {
	nd := &ir.Node{Name: "pm", Op: "MatMul", Attrs: ir.Attrs{
		"k": ir.IntAttr(int64(k)), "n": ir.IntAttr(int64(n)), "nr": ir.IntAttr(int64(nr))}}
	if transA {
		nd.Attrs["transpose_a"] = ir.IntAttr(1)
	}
	return nd
}

// packedMatMul runs matMulPacked with in[1] as the packed B that node nd
// (packedNode) describes.
func packedMatMul(ctx *opkernel.Ctx, nd *ir.Node, in, out []*ir.Tensor) error {
	pw := &packedWeight{data: in[1].F32(), k: int(nd.Attrs.Int("k", -1)), n: int(nd.Attrs.Int("n", -1)), nr: int(nd.Attrs.Int("nr", -1))}
	return matMulPacked(ctx, nd, pw, in, out)
}

// outShape is what ir's shape function gives; built here so the kernel test
// does not depend on it.
func packedOutShape(aShape []int64, transA bool, n int) []int64 {
	r := len(aShape)
	if transA && r >= 2 {
		return append(append([]int64{}, aShape[:r-2]...), aShape[r-1], int64(n))
	}
	return append(append([]int64{}, aShape[:r-1]...), int64(n))
}

func checkClose(t *testing.T, name string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4+1e-3*math.Abs(want[i]) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s: element %d = %g, want %g (diff %g)", name, i, got[i], want[i], d)
		}
	}
}

func runPacked(t *testing.T, threads int, aShape []int64, transA bool, k, n, nr int, transB bool, rng *rand.Rand) {
	t.Helper()
	runPackedAt(t, threads, aShape, transA, k, n, nr, transB, 0, rng)
}

// runPackedAt is runPacked with packed B placed bOff bytes past a 64-byte
// boundary, as weights in a .mindir mapping are.
func runPackedAt(t *testing.T, threads int, aShape []int64, transA bool, k, n, nr int, transB bool, bOff int, rng *rand.Rand) {
	t.Helper()
	a := randTensor(rng, aShape...)
	b := randTensor(rng, int64(k), int64(n))
	bStored := b.F32()
	if transB { // B^T stored [n, k], as transpose_b reads it
		bStored = make([]float32, k*n)
		for q := 0; q < k; q++ {
			for j := 0; j < n; j++ {
				bStored[j*k+q] = b.F32()[q*n+j]
			}
		}
	}
	packed := ir.PackB(bStored, k, n, nr, transB)
	bp := ir.Float32Tensor([]int64{int64(len(packed))}, packed...)
	if bOff != 0 {
		raw := make([]byte, 4*len(packed)+128)
		o := bOff + (64-int(uintptr(unsafe.Pointer(&raw[0]))%64))%64
		bp.Data = raw[o : o+4*len(packed)]
		copy(unsafe.Slice((*float32)(unsafe.Pointer(&bp.Data[0])), len(packed)), packed)
	}
	y := ir.NewTensor(ir.Float32, packedOutShape(aShape, transA, n))
	for i := range y.F32() { // outputs are not zeroed by the executor
		y.F32()[i] = float32(math.NaN())
	}
	if err := packedMatMul(&opkernel.Ctx{Threads: threads}, packedNode(k, n, nr, transA), []*ir.Tensor{a, bp}, []*ir.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("A%v transA=%v k=%d n=%d nr=%d transB=%v threads=%d bOff=%d", aShape, transA, k, n, nr, transB, threads, bOff)
	checkClose(t, name, y.F32(), refPackedMatMul(a.F32(), aShape, transA, b.F32(), k, n))
}

type packedCase struct {
	a      []int64
	transA bool
	k, n   int
	transB bool
}

var packedCases = []packedCase{
	{[]int64{1, 1}, false, 1, 1, false},
	{[]int64{5, 7}, false, 7, 33, false},       // N remainder 1, M < MR
	{[]int64{13, 300}, false, 300, 65, true},   // K crosses the 256 block, M remainder 1
	{[]int64{25, 513}, false, 513, 31, false},  // N < one panel, K two blocks + 1
	{[]int64{300, 40}, false, 40, 96, false},   // M crosses the 240-row block
	{[]int64{300, 520}, false, 520, 70, false}, // M and K both cross their blocks (the blocked order, at 1 thread)
	{[]int64{40, 29}, true, 40, 50, false},     // transpose_a: A is [k, m]
	{[]int64{3, 17, 11}, true, 17, 45, true},   // batched transpose_a
	{[]int64{2, 9, 64}, false, 64, 70, false},  // batch folds into M
	// Large enough to split over threads (2*minParallelFMAs):
	{[]int64{50, 700}, false, 700, 97, false},    // ragged M, K blocks + remainder, N remainder 1
	{[]int64{600, 37}, true, 600, 130, true},     // transpose_a, transpose_b
	{[]int64{20, 64}, false, 64, 4100, false},    // >= 32 panels per thread: shared chunks
	{[]int64{77}, false, 77, 40, false},          // 1-D A
	{[]int64{1, 1283}, false, 1283, 1000, false}, // GEMV (ukr512_row): K blocks + 3, N remainder 8, split by panels
	{[]int64{77}, true, 77, 40, false},           // transpose_a ignored for 1-D A
	{[]int64{0, 8}, false, 8, 16, false},         // empty M
	{[]int64{6, 0}, false, 0, 16, false},         // K = 0: zeros
}

func TestPackedMatMul(t *testing.T) {
	cases := packedCases
	rng := rand.New(rand.NewSource(7))
	defer setPackedISA("")
	for _, isa := range []string{"avx512f", "avx2", "portable"} {
		if !setPackedISA(isa) {
			t.Logf("CPU lacks %s; skipped", isa)
			continue
		}
		for _, c := range cases {
			for _, nr := range []int{32, 16, 7} {
				for _, th := range []int{1, 2, 3} {
					t.Run(fmt.Sprintf("%s/%v_t%v_k%d_n%d_nr%d_th%d", isa, c.a, c.transA, c.k, c.n, nr, th), func(t *testing.T) {
						runPacked(t, th, c.a, c.transA, c.k, c.n, nr, c.transB, rng)
					})
				}
			}
		}
	}
}

// TestPackedMatMulBertSize checks the corpus tolerance on the largest bert
// product (K=3072) on both parallel splits.
func TestPackedMatMulBertSize(t *testing.T) {
	if testing.Short() {
		t.Skip("large GEMM")
	}
	rng := rand.New(rand.NewSource(3))
	runPacked(t, 2, []int64{1, 128, 3072}, false, 3072, 768, 32, false, rng)
	runPacked(t, 2, []int64{64, 3072}, false, 3072, 40, 32, true, rng) // 2 panels: rows split
}

// TestPackedMatMulUnalignedB: B at odd byte offsets goes through the aligned
// copy of each K block (M > one sliver), including K and N remainders.
func TestPackedMatMulUnalignedB(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	defer setPackedISA("")
	for _, isa := range []string{"avx512f", "avx2", "portable"} {
		if !setPackedISA(isa) {
			continue
		}
		for _, off := range []int{4, 7, 61} {
			for _, c := range [][3]int{{30, 300, 65}, {13, 513, 40}, {25, 256, 32}, {5, 40, 70}} {
				t.Run(fmt.Sprintf("%s/off%d/m%d_k%d_n%d", isa, off, c[0], c[1], c[2]), func(t *testing.T) {
					runPackedAt(t, 1, []int64{int64(c[0]), int64(c[1])}, false, c[1], c[2], 32, false, off, rng)
					runPackedAt(t, 2, []int64{int64(c[1]), int64(c[0])}, true, c[1], c[2], 32, true, off, rng)
				})
			}
		}
	}
}

func TestPackedMatMulErrors(t *testing.T) {
	f := packedMatMul
	ctx := &opkernel.Ctx{Threads: 1}
	a := ir.NewTensor(ir.Float32, []int64{2, 4})
	bp := ir.NewTensor(ir.Float32, []int64{int64(ir.PackedLen(4, 3, 32))})
	y := ir.NewTensor(ir.Float32, []int64{2, 3})
	if err := f(ctx, packedNode(4, 3, 32, false), []*ir.Tensor{a, bp}, []*ir.Tensor{y}); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	short := ir.NewTensor(ir.Float32, []int64{10})
	if err := f(ctx, packedNode(4, 3, 32, false), []*ir.Tensor{a, short}, []*ir.Tensor{y}); err == nil {
		t.Error("short packed B accepted")
	}
	if err := f(ctx, packedNode(5, 3, 32, false), []*ir.Tensor{a, bp}, []*ir.Tensor{y}); err == nil {
		t.Error("K mismatch accepted")
	}
	a64 := ir.NewTensor(ir.Float64, []int64{2, 4})
	err := f(ctx, packedNode(4, 3, 32, false), []*ir.Tensor{a64, bp}, []*ir.Tensor{y})
	if _, ok := err.(*opkernel.Unsupported); !ok {
		t.Errorf("float64 A: got %v, want Unsupported", err)
	}
}

// mmValueNode is MatMul(a, b[, bias]) over ir.Values for prepareMatMul: A
// float32 of aShape, B a constant (stored [n, k] with transB), marked pack_b.
func mmValueNode(aShape []int64, transA bool, b *ir.Tensor, transB bool, bias *ir.Tensor) *ir.Node {
	attrs := ir.Attrs{ir.AttrPackB: ir.IntAttr(1)}
	if transA {
		attrs["transpose_a"] = ir.IntAttr(1)
	}
	if transB {
		attrs["transpose_b"] = ir.IntAttr(1)
	}
	ins := []*ir.Value{{Name: "a", DType: ir.Float32, Shape: aShape}, {Name: "b", DType: ir.Float32, Shape: b.Shape, Const: b}}
	if bias != nil {
		ins = append(ins, &ir.Value{Name: "bias", DType: ir.Float32, Shape: bias.Shape, Const: bias})
	}
	return &ir.Node{Name: "mm", Op: "MatMul", Attrs: attrs, Inputs: ins, Outputs: []*ir.Value{{Name: "y"}}}
}

// TestPrepareMatMul: a MatMul marked pack_b is bound at preparation to the
// packed GEMM over ir.PackB(B), with exactly the numerics of calling that
// GEMM on B packed by hand (the former PackedMatMul op), transposes and bias
// included; two nodes reading one B share one packed copy.
func TestPrepareMatMul(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	ctx := &opkernel.Ctx{Threads: 2}
	for _, c := range packedCases {
		if c.k == 0 {
			continue // a MatMul's constant B has no empty dim
		}
		for _, withBias := range []bool{false, true} {
			a := randTensor(rng, c.a...)
			bShape := []int64{int64(c.k), int64(c.n)}
			if c.transB {
				bShape = []int64{int64(c.n), int64(c.k)}
			}
			b := randTensor(rng, bShape...)
			var bias *ir.Tensor
			in := []*ir.Tensor{a, b}
			if withBias {
				bias = randTensor(rng, int64(c.n))
				in = append(in, bias)
			}
			n := mmValueNode(c.a, c.transA, b, c.transB, bias)
			p := opkernel.NewPrep()
			f, ok, err := p.Bind(n)
			if !ok || err != nil || p.Weights != 1 || p.WeightBytes != int64(4*ir.PackedLen(c.k, c.n, ir.PackNR)) {
				t.Fatalf("%+v: Bind ok=%v err=%v, %d weights %d bytes", c, ok, err, p.Weights, p.WeightBytes)
			}
			got := ir.NewTensor(ir.Float32, packedOutShape(c.a, c.transA, c.n))
			if err := f(ctx, n, in, []*ir.Tensor{got}); err != nil {
				t.Fatal(err)
			}
			packed := ir.PackB(b.F32(), c.k, c.n, ir.PackNR, c.transB)
			bp := ir.Float32Tensor([]int64{int64(len(packed))}, packed...)
			want := ir.NewTensor(ir.Float32, got.Shape)
			ref := []*ir.Tensor{a, bp}
			if withBias {
				ref = append(ref, bias)
			}
			if err := packedMatMul(ctx, packedNode(c.k, c.n, ir.PackNR, c.transA), ref, []*ir.Tensor{want}); err != nil {
				t.Fatal(err)
			}
			for i, w := range want.F32() {
				if math.Float32bits(got.F32()[i]) != math.Float32bits(w) {
					t.Fatalf("%+v bias=%v: element %d = %g, packed GEMM gives %g", c, withBias, i, got.F32()[i], w)
				}
			}
			// A second node on the same B (same transpose) reuses the copy.
			if _, _, err := p.Bind(mmValueNode(c.a, c.transA, b, c.transB, nil)); err != nil || p.Weights != 1 {
				t.Fatalf("second node: err=%v, %d weights", err, p.Weights)
			}
		}
	}
}

// Not packed at preparation: unmarked MatMuls, marked ones that
// ir.PackableMatMul refuses; and a bound node given another B than the one
// packed falls back to MatMul.
func TestPrepareMatMulDeclines(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	b := randTensor(rng, 8, 4)
	p := opkernel.NewPrep()
	unmarked := mmValueNode([]int64{3, 8}, false, b, false, nil)
	delete(unmarked.Attrs, ir.AttrPackB)
	mismatch := mmValueNode([]int64{3, 7}, false, b, false, nil)
	for _, n := range []*ir.Node{unmarked, mismatch} {
		if f, err := prepareMatMul(p, n); f != nil || err != nil {
			t.Errorf("%v: prepared (err %v)", n.Attrs, err)
		}
	}
	if p.Weights != 0 {
		t.Errorf("%d weights packed", p.Weights)
	}
	n := mmValueNode([]int64{3, 8}, false, b, false, nil)
	f, _, _ := p.Bind(n)
	a, other := randTensor(rng, 3, 8), randTensor(rng, 8, 4)
	got, want := ir.NewTensor(ir.Float32, []int64{3, 4}), ir.NewTensor(ir.Float32, []int64{3, 4})
	if err := f(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{a, other}, []*ir.Tensor{got}); err != nil {
		t.Fatal(err)
	}
	if err := matMul(&opkernel.Ctx{Threads: 1}, n, []*ir.Tensor{a, other}, []*ir.Tensor{want}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.F32(), want.F32()) {
		t.Errorf("another B: %v, MatMul gives %v", got.F32(), want.F32())
	}
}

// Packed weights live in anonymous mappings that are unmapped once nothing
// (no session's Func) reaches them.
func TestPackedWeightUnmapped(t *testing.T) {
	var mu sync.Mutex
	made, freed := map[uintptr]int{}, map[uintptr]int{}
	defer func(f func([]byte) error) { munmapPacked = f }(munmapPacked)
	munmapPacked = func(m []byte) error {
		mu.Lock()
		freed[uintptr(unsafe.Pointer(&m[0]))]++
		mu.Unlock()
		return syscall.Munmap(m)
	}
	rng := rand.New(rand.NewSource(4))
	b := randTensor(rng, 300, 200)
	n := mmValueNode([]int64{2, 300}, false, b, false, nil)
	for range 8 {
		w := newPackedWeight(b, 300, 200, false)
		mu.Lock()
		made[uintptr(unsafe.Pointer(&w.data[0]))]++
		mu.Unlock()
		y := ir.NewTensor(ir.Float32, []int64{2, 200})
		if err := matMulPacked(&opkernel.Ctx{Threads: 1}, n, w, []*ir.Tensor{randTensor(rng, 2, 300), b}, []*ir.Tensor{y}); err != nil {
			t.Fatal(err)
		}
	}
	done := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for a, c := range made {
			if freed[a] < c {
				return false
			}
		}
		return true
	}
	for i := 0; i < 200 && !done(); i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if !done() {
		t.Errorf("packed weights not unmapped: made %v, freed %v", made, freed)
	}
}

// Split over threads (by panels, in shared chunks, or by rows in whole
// slivers), the GEMM gives the same bits as on one thread: every output is
// the same operations in the same order.
func TestPackedMatMulThreadsExact(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, c := range []struct {
		m, k, n int
		transA  bool
	}{{128, 768, 768, false}, {50, 700, 97, false}, {37, 600, 130, true}, {20, 64, 4100, false}, {200, 300, 40, false}} {
		aShape := []int64{int64(c.m), int64(c.k)}
		if c.transA {
			aShape = []int64{int64(c.k), int64(c.m)}
		}
		a, b := randTensor(rng, aShape...), randTensor(rng, int64(c.k), int64(c.n))
		packed := ir.PackB(b.F32(), c.k, c.n, ir.PackNR, false)
		bp := ir.Float32Tensor([]int64{int64(len(packed))}, packed...)
		var got [2][]float32
		for i, th := range []int{1, 2} {
			y := ir.NewTensor(ir.Float32, []int64{int64(c.m), int64(c.n)})
			if err := packedMatMul(&opkernel.Ctx{Threads: th}, packedNode(c.k, c.n, ir.PackNR, c.transA), []*ir.Tensor{a, bp}, []*ir.Tensor{y}); err != nil {
				t.Fatal(err)
			}
			got[i] = y.F32()
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("%+v: 2 threads differ from 1", c)
		}
	}
}

// TestPackedMatMulEpilogue checks the packed path's epilogue at every ISA
// level, thread count and panel width: the folded bias (MatMulAddFusion),
// then RELU or RELU6 (MatMulActivationFusion), bit for bit as the plain
// product followed by the Add and the clamp (values reach past 6 and below 0
// with K up to 700), NaN passing as through the ReLU op. A bias of the wrong
// length and an activation other than RELU/RELU6 are refused.
func TestPackedMatMulEpilogue(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	defer setPackedISA("")
	f := packedMatMul
	clamp := func(v float32, act int64) float32 {
		if act == ir.ActNone {
			return v
		}
		if v < 0 {
			v = 0
		}
		if act == ir.ActReLU6 && v > 6 {
			v = 6
		}
		return v
	}
	seen := map[string]bool{}
	for _, isa := range []string{"avx512f", "avx2", "portable"} {
		if !setPackedISA(isa) {
			continue
		}
		for _, c := range append(packedCases, packedCase{[]int64{128, 600}, false, 600, 100, false}) {
			for _, nr := range []int{32, 7} {
				for _, th := range []int{1, 2} {
					for _, act := range []int64{ir.ActNone, ir.ActReLU, ir.ActReLU6} {
						for _, withBias := range []bool{false, true} {
							a := randTensor(rng, c.a...)
							if len(a.F32()) > 3 {
								a.F32()[3] = float32(math.NaN())
							}
							b := randTensor(rng, int64(c.k), int64(c.n))
							bias := randTensor(rng, int64(c.n))
							for i := range bias.F32() {
								bias.F32()[i] *= 8
							}
							packed := ir.PackB(b.F32(), c.k, c.n, nr, false)
							bp := ir.Float32Tensor([]int64{int64(len(packed))}, packed...)
							nd := packedNode(c.k, c.n, nr, c.transA)
							plain := ir.NewTensor(ir.Float32, packedOutShape(c.a, c.transA, c.n))
							fused := ir.NewTensor(ir.Float32, plain.Shape)
							ctx := &opkernel.Ctx{Threads: th}
							if err := f(ctx, nd, []*ir.Tensor{a, bp}, []*ir.Tensor{plain}); err != nil {
								t.Fatal(err)
							}
							in := []*ir.Tensor{a, bp}
							if withBias {
								in = append(in, bias)
							}
							nd.Attrs[ir.AttrActivation] = ir.IntAttr(act)
							if err := f(ctx, nd, in, []*ir.Tensor{fused}); err != nil {
								t.Fatal(err)
							}
							for i, v := range plain.F32() {
								if withBias {
									v += bias.F32()[i%c.n]
								}
								want := clamp(v, act)
								got := fused.F32()[i]
								if got != want && !(want != want && got != got) {
									t.Fatalf("%s %v k=%d n=%d nr=%d th=%d act=%d bias=%v: element %d = %g, want %g",
										isa, c.a, c.k, c.n, nr, th, act, withBias, i, got, want)
								}
								switch {
								case act == ir.ActNone:
								case v < 0:
									seen["neg"] = true
								case v > 6:
									seen["above6"] = true
								}
							}
						}
					}
				}
			}
		}
	}
	if !seen["neg"] || !seen["above6"] {
		t.Fatalf("inputs never reached both clamps: %v", seen)
	}
	a, bp := ir.NewTensor(ir.Float32, []int64{2, 4}), ir.NewTensor(ir.Float32, []int64{int64(ir.PackedLen(4, 3, 32))})
	y := ir.NewTensor(ir.Float32, []int64{2, 3})
	if err := f(&opkernel.Ctx{Threads: 1}, packedNode(4, 3, 32, false), []*ir.Tensor{a, bp, ir.NewTensor(ir.Float32, []int64{4})}, []*ir.Tensor{y}); err == nil {
		t.Error("bias of the wrong length accepted")
	}
	nd := packedNode(4, 3, 32, false)
	nd.Attrs[ir.AttrActivation] = ir.IntAttr(ir.ActSigmoid)
	if err := f(&opkernel.Ctx{Threads: 1}, nd, []*ir.Tensor{a, bp}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 3})}); err == nil {
		t.Error("activation_type SIGMOID accepted on a MatMul")
	}
}

// TestMatMulActivationUnpacked: the unpacked MatMul (any B, batched,
// float32 and float64) applies bias then RELU/RELU6; integer MatMuls refuse
// an activation.
func TestMatMulActivationUnpacked(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, dt := range []ir.DType{ir.Float32, ir.Float64} {
		for _, act := range []int64{ir.ActNone, ir.ActReLU, ir.ActReLU6} {
			a, b := ir.NewTensor(dt, []int64{2, 5, 40}), ir.NewTensor(dt, []int64{2, 40, 9})
			bias := ir.NewTensor(dt, []int64{9})
			for _, x := range []*ir.Tensor{a, b, bias} {
				for i := range x.NumElements() {
					v := rng.Float64()*4 - 2
					if dt == ir.Float32 {
						x.F32()[i] = float32(v)
					} else {
						x.F64()[i] = v
					}
				}
			}
			plain, fused := ir.NewTensor(dt, []int64{2, 5, 9}), ir.NewTensor(dt, []int64{2, 5, 9})
			ctx := &opkernel.Ctx{Threads: 1}
			if err := matMul(ctx, &ir.Node{Name: "mm", Op: "MatMul"}, []*ir.Tensor{a, b}, []*ir.Tensor{plain}); err != nil {
				t.Fatal(err)
			}
			nd := &ir.Node{Name: "mm", Op: "MatMul", Attrs: ir.Attrs{ir.AttrActivation: ir.IntAttr(act)}}
			if err := matMul(ctx, nd, []*ir.Tensor{a, b, bias}, []*ir.Tensor{fused}); err != nil {
				t.Fatal(err)
			}
			var lo, hi int
			for i := range plain.NumElements() {
				var v, got float64
				if dt == ir.Float32 {
					v, got = float64(plain.F32()[i]+bias.F32()[i%9]), float64(fused.F32()[i])
				} else {
					v, got = plain.F64()[i]+bias.F64()[i%9], fused.F64()[i]
				}
				want := v
				if act != ir.ActNone && want < 0 {
					want, lo = 0, lo+1
				}
				if act == ir.ActReLU6 && want > 6 {
					want, hi = 6, hi+1
				}
				if got != want {
					t.Fatalf("%s act=%d: element %d = %g, want %g", dt, act, i, got, want)
				}
			}
			if act != ir.ActNone && lo == 0 || act == ir.ActReLU6 && hi == 0 {
				t.Fatalf("%s act=%d: the clamps were never reached (%d below 0, %d above 6)", dt, act, lo, hi)
			}
		}
	}
	nd := &ir.Node{Name: "mm", Op: "MatMul", Attrs: ir.Attrs{ir.AttrActivation: ir.IntAttr(ir.ActReLU)}}
	ai, bi := ir.NewTensor(ir.Int32, []int64{2, 2}), ir.NewTensor(ir.Int32, []int64{2, 2})
	if err := matMul(&opkernel.Ctx{Threads: 1}, nd, []*ir.Tensor{ai, bi}, []*ir.Tensor{ir.NewTensor(ir.Int32, []int64{2, 2})}); err == nil {
		t.Error("int32 MatMul with activation_type accepted")
	}
}
