package main

import (
	goruntime "runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/runtime/cpuisa"
	"gkconv/internal/runtime/native"
)

// version is set with -ldflags "-X main.version=..."; otherwise the VCS
// revision Go records in the binary is shown.
var version = ""

func versionString() string {
	v := version
	rev, dirty := "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (" + rev
		if dirty {
			v += ", modified"
		}
		v += ")"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go toolchain, the C compiler found and the CPU features kernels use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sayf("converter %s\n", versionString())
			sayf("go: %s %s/%s\n", goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
			if cc, err := convert.DescribeCompiler(); err != nil {
				sayf("C compiler: none (%v): fused CPU kernels run interpreted\n", err)
			} else {
				sayf("C compiler: %s (%s), -march=%s\n", cc.Path, cc.Version, cc.MArch)
				sayf("kernel ISA: %s; needs %s\n", cc.Feature, strings.Join(cc.Features, " "))
			}
			var isa []string
			host := native.HostFlags()
			for _, f := range []string{"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "neon", "asimd"} {
				if host[f] {
					isa = append(isa, f)
				}
			}
			sayf("CPU: %s\n", strings.Join(isa, " "))
			sayf("runtime ISA level: detected %s, %s\n", cpuisa.Detected(), forcedLevel())
			return nil
		},
	}
}
