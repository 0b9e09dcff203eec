package benchmark

import (
	"strings"
	"testing"

	"gkconv/internal/runtime"
)

func TestCheckMemoryNamesTheLimit(t *testing.T) {
	g := negGraph(t) // x float32 [2,2]: 16 bytes of input
	if err := CheckMemory(g, MemoryLimit{Bytes: 0, What: "none"}); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := CheckMemory(g, MemoryLimit{Bytes: 64, What: "--maxMemory"}); err != nil {
		t.Errorf("fits: %v", err)
	}
	err := CheckMemory(g, MemoryLimit{Bytes: 8, What: "--maxMemory"})
	if err == nil || err.Error() != "the inputs need 16 bytes (input x [2 2]), more than --maxMemory (8 bytes)" {
		t.Errorf("too big: %v", err)
	}
	g.Inputs[0].Shape = []int64{1 << 40, 1 << 30} // saturates instead of overflowing
	if err := CheckMemory(g, MemoryLimit{Bytes: 1 << 30, What: "x"}); err == nil || !strings.Contains(err.Error(), "more than x") {
		t.Errorf("huge: %v", err)
	}
}

func TestCheckPlanAddsTheInputs(t *testing.T) {
	g := negGraph(t)
	plan := runtime.MemoryPlan{PoolPeak: 16, OutputBytes: 32}
	if err := CheckPlan(plan, g, MemoryLimit{Bytes: 64, What: "--maxMemory"}); err != nil {
		t.Errorf("fits: %v", err)
	}
	if err := CheckPlan(plan, g, MemoryLimit{Bytes: 63, What: "--maxMemory"}); err == nil || !strings.HasPrefix(err.Error(), "the memory plan needs 64 bytes") {
		t.Errorf("one byte short: %v", err)
	}
}
