package main

import (
	"fmt"
	"strconv"
	"strings"

	"gkconv/internal/benchmark"
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

// memoryLimit is --maxMemory when given (flag > 0), else the memory
// available at the time of the check.
func memoryLimit(flag int64) benchmark.MemoryLimit {
	if flag > 0 {
		return benchmark.MemoryLimit{Bytes: flag, What: "--maxMemory"}
	}
	return benchmark.MemoryLimit{Bytes: benchmark.MemAvailable(), What: "the memory available (MemAvailable)"}
}
