package nn

import (
	"math/rand"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/runtime/opkernel"
)

// BenchmarkQLinearMatMul: bert_tiny's fused QKV projection (32x128 by
// 128x384), one thread, B packed at load as the session does.
func BenchmarkQLinearMatMul(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	a := randQ(r, ir.Uint8, 32, 128)
	w := randQ(r, ir.Int8, 128, 384)
	ws := ir.NewTensor(ir.Float32, []int64{384})
	for i := range ws.F32() {
		ws.F32()[i] = 0.01
	}
	in := []*ir.Tensor{a, ir.Float32Tensor(nil, 0.05), scalarQ(ir.Uint8, 120), w, ws, ir.NewTensor(ir.Int8, []int64{384}), ir.Float32Tensor(nil, 0.1), scalarQ(ir.Uint8, 128)}
	y := ir.NewTensor(ir.Uint8, []int64{32, 384})
	n := &ir.Node{Name: "qm", Op: "QLinearMatMul"}
	ctx := &opkernel.Ctx{Threads: 1}
	pb := packQB(w.Data, true, 128, 384, 384)
	b.SetBytes(32 * 128 * 384) // multiply-adds
	for i := 0; i < b.N; i++ {
		if err := qmatmul(ctx, n, in, []*ir.Tensor{y}, 3, pb); err != nil {
			b.Fatal(err)
		}
	}
}
