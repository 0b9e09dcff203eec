package benchmark

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

// MemoryLimit is the most memory a run may need, with the words that name
// where the limit came from in messages (an option, or MemAvailable).
// Bytes <= 0 is no limit.
type MemoryLimit struct {
	Bytes int64
	What  string
}

// MemAvailable is /proc/meminfo's MemAvailable in bytes, 0 when unknown.
func MemAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// CheckMemory refuses a run whose inputs together, or any one tensor the
// graph computes (shapes as inferred before the run), need more than the
// limit, so that absurd input shapes fail with an error instead of a Go
// runtime out-of-memory crash. It runs before a session exists; CheckPlan
// checks the session's plan after.
func CheckMemory(g *ir.Graph, limit MemoryLimit) error {
	if limit.Bytes <= 0 {
		return nil
	}
	_ = ir.InferShapes(g) // best effort: unknown shapes are checked at run time
	var inputs int64
	for _, v := range g.Inputs {
		b := valueBytes(v)
		inputs = min(inputs+b, 1<<62)
		if inputs > limit.Bytes || b > limit.Bytes {
			return fmt.Errorf("the inputs need %d bytes (input %s %v), more than %s (%d bytes)", inputs, v.Name, v.Shape, limit.What, limit.Bytes)
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil || o.Shape == nil {
				continue
			}
			e := ir.NumElements(o.Shape)
			size := int64(max(o.DType.Size(), 1))
			if e > 0 && (e > limit.Bytes/size) {
				return fmt.Errorf("node %s (%s): output %s %v needs more than %s (%d bytes)", n.Name, n.Op, o.Name, o.Shape, limit.What, limit.Bytes)
			}
		}
	}
	return nil
}

// CheckPlan refuses a run whose memory plan (the session's replay of one
// run's allocations on the static shapes, plus the inputs) needs more than
// the limit: the sum of everything alive at the peak, not just the largest
// tensor, is what decides whether the run fits.
func CheckPlan(plan runtime.MemoryPlan, g *ir.Graph, limit MemoryLimit) error {
	if limit.Bytes <= 0 {
		return nil
	}
	var inputs int64
	for _, v := range g.Inputs {
		inputs = min(inputs+valueBytes(v), 1<<62)
	}
	total := min(plan.Total(), 1<<62) + inputs
	if total > limit.Bytes {
		return fmt.Errorf("the memory plan needs %d bytes (intermediates at their peak %d, graph outputs %d, prepared weights %d, inputs %d), more than %s (%d bytes)",
			total, plan.PoolPeak, plan.OutputBytes, plan.PreparedBytes, inputs, limit.What, limit.Bytes)
	}
	return nil
}

// valueBytes is the bytes of a value's static shape, saturating at 2^62; 0
// when the shape is unknown (checked at run time).
func valueBytes(v *ir.Value) int64 {
	n := ir.NumElements(v.Shape)
	if v.Shape == nil || n <= 0 {
		return 0
	}
	size := int64(max(v.DType.Size(), 1))
	return min(n, (1<<62)/size) * size
}
