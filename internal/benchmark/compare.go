package benchmark

import (
	"fmt"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

// Tolerance is what an output must meet to match its reference:
// |got-ref| <= Atol + Rtol*|ref| element-wise, and a mean bias (MindSpore
// Lite's metric, in percent) of at most MeanBiasPct.
type Tolerance struct {
	Atol, Rtol, MeanBiasPct float64
}

// OutputCheck is one output's comparison; Checked is false when the output
// had no reference.
type OutputCheck struct {
	Name     string
	Checked  bool
	Accuracy runtime.Accuracy
}

// Compare compares each output with its reference (refs[i] nil: not
// checked). On an error (an output that cannot be compared, such as a
// shape mismatch) the checks before it are returned with the error, so a
// caller can print what was compared before saying what failed.
func Compare(g *ir.Graph, outs, refs []*ir.Tensor, tol Tolerance) ([]OutputCheck, error) {
	var checks []OutputCheck
	for i, out := range outs {
		name := g.Outputs[i].Name
		if refs[i] == nil {
			checks = append(checks, OutputCheck{Name: name})
			continue
		}
		acc, err := runtime.Compare(name, out, refs[i], tol.Atol, tol.Rtol, tol.MeanBiasPct)
		if err != nil {
			return checks, err
		}
		checks = append(checks, OutputCheck{Name: name, Checked: true, Accuracy: acc})
	}
	return checks, nil
}

// Verdict is nil when every checked output passed, else an error naming
// each failing output with its first mismatch (or its mean bias).
func Verdict(checks []OutputCheck, tol Tolerance) error {
	var failed []string
	for _, c := range checks {
		acc := c.Accuracy
		if !c.Checked || acc.Pass {
			continue
		}
		why := acc.FirstMismatch
		if why == "" {
			why = fmt.Sprintf("mean bias %.4f%% > %g%%", acc.MeanBiasPct, tol.MeanBiasPct)
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", acc.Name, why))
	}
	if len(failed) > 0 {
		return fmt.Errorf("accuracy check failed for output(s) %s (atol %g, rtol %g)", strings.Join(failed, "; "), tol.Atol, tol.Rtol)
	}
	return nil
}
