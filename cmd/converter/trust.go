package main

import (
	"os"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/runtime"
	"gkconv/internal/trust"
)

// Environment variables of the kernel trust policy (internal/trust).
const (
	TrustEnv       = trust.TrustEnv
	TrustedKeysEnv = trust.TrustedKeysEnv
)

// trustFlags are the flags of the kernel trust policy (benchmark, inspect).
type trustFlags struct {
	trustEmbedded bool
	trustedKeys   string
}

func (t *trustFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&t.trustEmbedded, "trustEmbeddedKernels", false,
		"load the native kernel binaries embedded in the model (default: rebuild each fused kernel from its body with the local C compiler, or run it interpreted); also "+TrustEnv+"=1. Only for models from a source you trust")
	fl.StringVar(&t.trustedKeys, "trustedKeys", "",
		"allowed_signers file (ssh-keygen(1) format) of the keys you trust (default $"+TrustedKeysEnv+"): when <model>.sig exists and verifies against it, the embedded kernel binaries are loaded; a .sig that does not verify is an error")
}

// kernelTrust is the decision for one model file.
type kernelTrust = trust.Decision

// decide applies the flags, the environment and <model>.sig to the model
// open as f.
func (t *trustFlags) decide(f *os.File, modelPath string) (kernelTrust, error) {
	p := trust.Policy{TrustEmbedded: t.trustEmbedded, TrustedKeys: t.trustedKeys}
	return p.Decide(f, modelPath+convert.SignatureSuffix)
}

// describeKernel is inspect's and benchmark's words for how a fused kernel
// runs by default.
func describeKernel(mode runtime.KernelMode, reason string, kt kernelTrust) string {
	switch mode {
	case runtime.KernelEmbedded:
		return "loaded (trusted: " + kt.Why + ")"
	case runtime.KernelRebuilt:
		if kt.Why == "" {
			return "rebuilt from its body (embedded binary not trusted)"
		}
		return "rebuilt from its body (embedded binary not trusted: " + kt.Why + ")"
	case runtime.KernelInterpreted:
		return "interpreted (" + reason + ")"
	}
	return string(mode)
}

// trustedKeysOr is --trustedKeys, or $GKCONV_TRUSTED_KEYS when it is empty.
func trustedKeysOr(flag string) string { return trust.TrustedKeysOr(flag) }
