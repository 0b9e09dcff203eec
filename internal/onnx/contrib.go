package onnx

import (
	"fmt"
	"slices"
	"strings"

	"gkconv/internal/ir"
)

// onnxruntime's com.microsoft operators that its quantizer writes in the
// QOperator format (quantize_static with QuantFormat.QOperator). These
// three are lookup tables in onnxruntime: each of the 256 input levels is
// dequantized, passed through the float op (MLAS's logistic for Sigmoid)
// and quantized again, which is exactly DequantizeLinear -> op ->
// QuantizeLinear here, level for level. Other contrib ops stay unsupported
// and are named as such.
var msContrib = map[string]func(c *nodeCtx) error{
	"QLinearConcat":  msQLinearConcat,
	"QLinearSigmoid": func(c *nodeCtx) error { return msQLinearUnary(c, "Sigmoid", nil) },
	"QLinearLeakyRelu": func(c *nodeCtx) error {
		return msQLinearUnary(c, "LeakyReLU", ir.Attrs{"alpha": ir.FloatAttr(c.attrs.Float("alpha", 0.01))})
	},
}

// msQLinearConcat: inputs Y_scale, Y_zero_point, then (X, X_scale,
// X_zero_point) per input; attribute axis.
func msQLinearConcat(c *nodeCtx) error {
	if len(c.in) < 5 || (len(c.in)-2)%3 != 0 || len(c.outs) != 1 {
		return fmt.Errorf("QLinearConcat needs Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got %d inputs", len(c.in))
	}
	if !c.attrs.Has("axis") {
		return fmt.Errorf("QLinearConcat needs attribute axis")
	}
	var fs []*ir.Value
	for i := 2; i < len(c.in); i += 3 {
		if c.in[i] == nil || c.in[i+1] == nil {
			return fmt.Errorf("QLinearConcat input %d has no tensor or no scale", (i-2)/3)
		}
		f := c.emit("DequantizeLinear", []*ir.Value{c.in[i], c.in[i+1], c.in[i+2]}, ir.Attrs{},
			c.out(false, fmt.Sprintf("dequantized_%d", (i-2)/3)))
		fs = append(fs, f.Outputs[0])
	}
	cat := c.emit("Concat", fs, ir.Attrs{"axis": c.attrs["axis"]}, c.out(false, "concat"))
	c.emit("QuantizeLinear", []*ir.Value{cat.Outputs[0], c.in[0], c.in[1]}, ir.Attrs{}, c.outs[0])
	return nil
}

// msQLinearUnary: inputs X, X_scale, X_zero_point?, Y_scale, Y_zero_point?.
func msQLinearUnary(c *nodeCtx, op string, attrs ir.Attrs) error {
	if len(c.in) < 4 || c.in[0] == nil || c.in[1] == nil || c.in[3] == nil || len(c.outs) != 1 {
		return fmt.Errorf("%s needs X, X_scale, X_zero_point, Y_scale and Y_zero_point", c.op)
	}
	var yz *ir.Value
	if len(c.in) > 4 {
		yz = c.in[4]
	}
	if yz == nil && c.in[2] != nil {
		// an absent Y zero point is 0 of X's type
		yz = c.constant("y_zero_point", ir.NewTensor(c.in[0].DType, []int64{}))
	}
	d := c.emit("DequantizeLinear", []*ir.Value{c.in[0], c.in[1], c.in[2]}, ir.Attrs{}, c.out(false, "dequantized"))
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	f := c.emit(op, d.Outputs, attrs, c.out(false, "float"))
	c.emit("QuantizeLinear", []*ir.Value{f.Outputs[0], c.in[3], yz}, ir.Attrs{}, c.outs[0])
	return nil
}

// contribNote names what the domain does support, for the error of an
// operator it does not.
func contribNote(domain string) string {
	if domain != "com.microsoft" {
		return ""
	}
	ops := make([]string, 0, len(msContrib))
	for op := range msContrib {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return " (of its operators only " + strings.Join(ops, ", ") + ")"
}
