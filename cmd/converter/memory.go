package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gkconv/internal/ir"
	"gkconv/internal/runtime"
)

// parseBytes reads a size such as 8G, 512M, 1048576 (binary units).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40} {
		if t, ok := strings.CutSuffix(strings.TrimSuffix(s, "B"), suffix); ok && t != "" {
			s, mult = t, m
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("--maxMemory=%s: want a positive size such as 8G, 512M or a byte count", s)
	}
	return v * mult, nil
}

// memAvailable is /proc/meminfo's MemAvailable in bytes, 0 when unknown.
func memAvailable() int64 {
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

// checkMemory refuses a run whose inputs together, or any one tensor the
// graph computes (shapes as inferred before the run), need more memory than
// limit (--maxMemory, else the memory available), so an absurd
// --inputShapes fails with the normal Failed line instead of a Go runtime
// out-of-memory crash.
func checkMemory(g *ir.Graph, limit int64) error {
	limit, what := memoryLimit(limit)
	if limit <= 0 {
		return nil
	}
	_ = ir.InferShapes(g) // best effort: unknown shapes are checked at run time
	var inputs int64
	for _, v := range g.Inputs {
		b := valueBytes(v)
		inputs = min(inputs+b, 1<<62)
		if inputs > limit || b > limit {
			return fmt.Errorf("the inputs need %d bytes (input %s %v), more than %s (%d bytes)", inputs, v.Name, v.Shape, what, limit)
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil || o.Shape == nil {
				continue
			}
			e := ir.NumElements(o.Shape)
			size := int64(max(o.DType.Size(), 1))
			if e > 0 && (e > limit/size) {
				return fmt.Errorf("node %s (%s): output %s %v needs more than %s (%d bytes)", n.Name, n.Op, o.Name, o.Shape, what, limit)
			}
		}
	}
	return nil
}

// memoryLimit is --maxMemory when given, else MemAvailable, with the words
// that name it in messages.
func memoryLimit(flag int64) (int64, string) {
	if flag > 0 {
		return flag, "--maxMemory"
	}
	return memAvailable(), "the memory available (MemAvailable)"
}

// checkPlan refuses a run whose memory plan (the session's replay of one
// run's allocations on the static shapes, plus the inputs) needs more than
// the limit: the sum of everything alive at the peak, not just the largest
// tensor, is what decides whether the run fits.
func checkPlan(plan runtime.MemoryPlan, g *ir.Graph, flag int64) error {
	limit, what := memoryLimit(flag)
	if limit <= 0 {
		return nil
	}
	var inputs int64
	for _, v := range g.Inputs {
		inputs = min(inputs+valueBytes(v), 1<<62)
	}
	total := min(plan.Total(), 1<<62) + inputs
	if total > limit {
		return fmt.Errorf("the memory plan needs %d bytes (intermediates at their peak %d, graph outputs %d, prepared weights %d, inputs %d), more than %s (%d bytes)",
			total, plan.PoolPeak, plan.OutputBytes, plan.PreparedBytes, inputs, what, limit)
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
