package native

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"gkconv/internal/ir"
)

var (
	flagsOnce sync.Once
	hostFlags map[string]bool
)

// HostFlags are the CPU flags of /proc/cpuinfo, plus those CPUID reports
// that cpuinfo left out (cpuidFlags); nil where cpuinfo is unreadable.
func HostFlags() map[string]bool {
	flagsOnce.Do(func() {
		b, err := os.ReadFile("/proc/cpuinfo")
		if err != nil {
			return
		}
		hostFlags = parseCPUFlags(string(b))
		for _, f := range cpuidFlags() {
			hostFlags[f] = true
		}
	})
	return hostFlags
}

func parseCPUFlags(cpuinfo string) map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k != "flags" && k != "Features" {
			continue
		}
		for _, f := range strings.Fields(v) {
			m[f] = true
		}
		break // every core lists the same flags
	}
	return m
}

// featureFlags are the cpuinfo flags a MindSpore cpu feature name implies.
var featureFlags = map[string][]string{
	"avx512": {"avx512f"},
	"avx":    {"avx"},
	"sse":    {"sse2"},
}

// CheckHost refuses a kernel built for another arch or for ISA extensions
// this CPU lacks. cpuFlags is the comma-separated list recorded at build time.
func CheckHost(arch, feature, cpuFlags string) error {
	return checkHost(arch, feature, cpuFlags, ir.HostArch(), HostFlags())
}

func checkHost(arch, feature, cpuFlags, host string, have map[string]bool) error {
	if arch != "" && arch != host {
		return fmt.Errorf("kernel was built for %s but this host is %s", arch, host)
	}
	if have == nil {
		return nil // no cpuinfo (not Linux): nothing to check against
	}
	need := append([]string{}, featureFlags[feature]...)
	for _, f := range strings.Split(cpuFlags, ",") {
		if f = strings.TrimSpace(f); f != "" {
			need = append(need, f)
		}
	}
	var missing []string
	for _, f := range need {
		if !have[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("kernel needs CPU feature %q (flags %s) that this host lacks: %s; rebuild the model with a lower --cpu_feature/--cpu_type",
			feature, cpuFlags, strings.Join(missing, ", "))
	}
	return nil
}
