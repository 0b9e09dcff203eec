package mindir

import (
	"bytes"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/testkit"
)

// TestSameUpperConvMindSporePrimitives: a Conv2D with auto_pad SAME_UPPER on
// an input of dynamic dims (its pads are left for run time) is written with
// MindSpore's own Conv2D and pad_mode "same", not Conv2DFusion, which
// MindSpore cannot run (checked once with MindSpore 2.7.2: a 9x11 input,
// stride 2, within 1.6e-5 of onnxruntime); it reads back as the same conv.
func TestSameUpperConvMindSporePrimitives(t *testing.T) {
	b := testkit.New(t, "same")
	x := b.Input("x", -1, 4, -1, -1)
	w := b.Const("w", ir.NewTensor(ir.Float32, []int64{6, 4, 3, 3}))
	y := b.Node("conv", "Conv2D", ir.Attrs{"auto_pad": ir.StringAttr("SAME_UPPER"), "strides": ir.IntsAttr(2, 2)}, x, w)
	g := b.Output(y)
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{MindSporePrimitives: true}); err != nil {
		t.Fatal(err)
	}
	data := buf.String()
	if strings.Contains(data, "Conv2DFusion") || !strings.Contains(data, "same") {
		t.Fatalf("not written as MindSpore's Conv2D with pad_mode same (Conv2DFusion %v)", strings.Contains(data, "Conv2DFusion"))
	}
	back, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var conv *ir.Node
	for _, n := range back.Nodes {
		if n.Op == "Conv2D" {
			conv = n
		}
	}
	if conv == nil {
		t.Fatalf("no Conv2D read back: %v", back.Nodes)
	}
	if s := conv.Outputs[0].Shape; len(s) != 4 || s[1] != 6 {
		t.Errorf("read back conv output %v, want [? 6 ? ?]", s)
	}
}
