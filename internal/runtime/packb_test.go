package runtime

import (
	"bufio"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// packModel: y1 = x @ w + bias, y2 = relu(x) @ w (w shared),
// y3 = x @ v^T (v [n, k], transpose_b). With mark, the three MatMuls carry
// pack_b = 1 as postprocess.matmul_pack_b sets it.
func packModel(t *testing.T, w, v, bias *ir.Tensor, m, k int64, mark bool) *ir.Graph {
	t.Helper()
	g := testkit.New(t, "pack")
	x := g.Input("x", 2, m, k)
	wv, vv, bv := g.Const("w", w), g.Const("v", v), g.Const("bias", bias)
	node := func(name, op string, attrs ir.Attrs, ins ...*ir.Value) *ir.Value {
		if mark && op == "MatMul" {
			attrs = attrs.Clone()
			attrs[ir.AttrPackB] = ir.IntAttr(1)
		}
		return g.Node(name, op, attrs, ins...)
	}
	y1 := node("mm1", "MatMul", nil, x, wv, bv)
	y2 := node("mm2", "MatMul", nil, node("relu", "ReLU", nil, x), wv)
	y3 := node("mm3", "MatMul", ir.Attrs{"transpose_b": ir.IntAttr(1)}, x, vv)
	return g.Output(y1, y2, y3)
}

func runOnce(t *testing.T, s *Session, x *ir.Tensor) [][]float32 {
	t.Helper()
	out, err := s.Run([]*ir.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float32, len(out))
	for i, o := range out {
		res[i] = append([]float32(nil), o.F32()...)
	}
	return res
}

func sameBits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: output %d has %d values, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j, w := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(w) {
				t.Fatalf("%s: output %d[%d] = %g, want %g", what, i, j, got[i][j], w)
			}
		}
	}
}

func fill(r *rand.Rand, t *ir.Tensor, exact bool) *ir.Tensor {
	for i := range t.F32() {
		if exact { // small halves: every product and sum is exact in float32
			t.F32()[i] = float32(r.Intn(9)-4) * 0.5
		} else {
			t.F32()[i] = r.Float32()*2 - 1
		}
	}
	return t
}

// TestSessionPacksMarkedMatMul: a session packs the MatMuls marked pack_b
// when it is prepared, one copy per weight and transpose, never per run;
// the marked graph gives bit-identical results to the unmarked one (on data
// whose arithmetic is exact, so that OpenBLAS's order of summation cannot
// matter) and agrees within float rounding on random data.
func TestSessionPacksMarkedMatMul(t *testing.T) {
	const m, k, n = 37, 70, 45 // remainders in every blocking dim
	for _, exact := range []bool{true, false} {
		r := rand.New(rand.NewSource(5))
		w := fill(r, ir.NewTensor(ir.Float32, []int64{k, n}), exact)
		v := fill(r, ir.NewTensor(ir.Float32, []int64{n, k}), exact)
		bias := fill(r, ir.NewTensor(ir.Float32, []int64{n}), exact)
		x := fill(r, ir.NewTensor(ir.Float32, []int64{2, m, k}), exact)
		for _, threads := range []int{1, 2} {
			plain, err := NewSession(packModel(t, w, v, bias, m, k, false), Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			if c, b := plain.PreparedWeights(); c != 0 || b != 0 {
				t.Fatalf("unmarked graph: %d weights (%d bytes) packed", c, b)
			}
			want := runOnce(t, plain, x)

			marked, err := NewSession(packModel(t, w, v, bias, m, k, true), Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			wantBytes := int64(4 * (ir.PackedLen(k, n, ir.PackNR) + ir.PackedLen(k, n, ir.PackNR)))
			if c, b := marked.PreparedWeights(); c != 2 || b != wantBytes { // w (read twice) and v
				t.Fatalf("prepared %d weights (%d bytes), want 2 (%d)", c, b, wantBytes)
			}
			got := runOnce(t, marked, x)
			name := fmt.Sprintf("exact=%v threads=%d", exact, threads)
			if exact {
				sameBits(t, name, got, want)
			} else {
				for i := range want {
					acc, err := Compare(fmt.Sprint(i), ir.Float32Tensor([]int64{int64(len(got[i]))}, got[i]...),
						ir.Float32Tensor([]int64{int64(len(want[i]))}, want[i]...), 1e-5, 1e-5, 0)
					if err != nil || !acc.Pass {
						t.Fatalf("%s: %v %+v", name, err, acc)
					}
				}
			}
			for range 3 { // runs build nothing and give the same bits
				sameBits(t, name+" rerun", runOnce(t, marked, x), got)
			}
			if c, _ := marked.PreparedWeights(); c != 2 {
				t.Fatalf("%d weights after runs", c)
			}
			// Runs read the copy packed at load, not the weights: scribbling
			// over them changes nothing for this session.
			saved := append([]byte(nil), w.Data...)
			for i := range w.F32() {
				w.F32()[i] = 1e6
			}
			sameBits(t, name+" after the weights changed", runOnce(t, marked, x), got)
			copy(w.Data, saved)
		}
	}
}

// mappingRSS is the resident size in kB of the mapping that starts at addr,
// from /proc/self/smaps.
func mappingRSS(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, _, _ := strings.Cut(fields[0], "-")
			a, err := strconv.ParseUint(lo, 16, 64)
			in = err == nil && uintptr(a) == addr
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb
		}
	}
	t.Fatalf("mapping at %#x not in /proc/self/smaps", addr)
	return 0
}

// TestSessionPackReleasesMapped: once a weight that lies in a registered file
// mapping is packed, its pages leave the process (ir.ReleaseMapped), so the
// original and the packed copy are not both resident; the weight still reads
// back from the file.
func TestSessionPackReleasesMapped(t *testing.T) {
	const k, n = 256, 64 // 64 KiB of weights: 16 pages
	r := rand.New(rand.NewSource(1))
	w := fill(r, ir.NewTensor(ir.Float32, []int64{k, n}), false)
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, w.Data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, err := syscall.Mmap(int(f.Fd()), 0, len(w.Data), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	ir.RegisterMapping(mapped)
	defer ir.UnregisterMapping(mapped)
	wm := &ir.Tensor{DType: ir.Float32, Shape: []int64{k, n}, Data: mapped}
	sum := 0
	for _, b := range mapped { // fault every page in
		sum += int(b)
	}
	addr := uintptr(unsafe.Pointer(&mapped[0]))
	if rss := mappingRSS(t, addr); rss < len(mapped)/1024 {
		t.Skipf("mapping not resident after reading it (%d kB)", rss)
	}
	g := ir.NewGraph("mapped")
	x := &ir.Value{Name: "x", DType: ir.Float32, Shape: []int64{3, k}}
	g.Inputs = []*ir.Value{x}
	mm := g.AddNode("mm", "MatMul", []*ir.Value{x, g.AddConst("w", wm)}, "y")
	mm.Attrs = ir.Attrs{ir.AttrPackB: ir.IntAttr(1)}
	if err := ir.InferNode(mm); err != nil {
		t.Fatal(err)
	}
	g.Outputs = mm.Outputs
	s, err := NewSession(g, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rss := mappingRSS(t, addr); rss != 0 {
		t.Errorf("%d kB of the packed weight's mapping still resident", rss)
	}
	xt := fill(r, ir.NewTensor(ir.Float32, []int64{3, k}), false)
	got := runOnce(t, s, xt)
	if rss := mappingRSS(t, addr); rss != 0 {
		t.Errorf("a run read the original weight back (%d kB)", rss)
	}
	// The same model on a heap copy of the weight: the same bits, and the
	// dropped pages read back from the file unchanged.
	g.Consts[0].Const = w
	heap, err := NewSession(g, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "heap weight", runOnce(t, heap, xt), got)
	if string(mapped) != string(w.Data) || sum == 0 {
		t.Error("the mapped weight does not read back as written")
	}
}
