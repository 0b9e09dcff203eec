package main

import (
	"errors"
	"fmt"
	stdio "io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/runtime"
	"gkconv/internal/safefs"
	"gkconv/internal/trust"
)

// Environment variables of the kernel trust policy.
const (
	// TrustEnv=1 is --trustEmbeddedKernels.
	TrustEnv = "GKCONV_TRUST_EMBEDDED_KERNELS"
	// TrustedKeysEnv is the default of --trustedKeys.
	TrustedKeysEnv = "GKCONV_TRUSTED_KEYS"
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
type kernelTrust struct {
	trusted bool
	why     string // "--trustEmbeddedKernels", "signed by alice", or why not trusted
	signer  string // the verified principal, if any
}

// decideTrust applies the flags, the environment and <model>.sig to the
// model open as f (read through f, so that the verified bytes are the
// loaded ones). A signature that exists but does not verify against the
// trusted keys (a modified model, a malformed .sig, another namespace) is an
// error; one by a key that is not trusted leaves the model untrusted.
func (t *trustFlags) decide(f *os.File, modelPath string) (kernelTrust, error) {
	var kt kernelTrust
	optIn := ""
	if t.trustEmbedded {
		optIn = "--trustEmbeddedKernels"
	} else if v := os.Getenv(TrustEnv); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return kt, fmt.Errorf("%s=%s: want 1 or 0", TrustEnv, v)
		}
		if on {
			optIn = TrustEnv + "=1"
		}
	}
	keys := trustedKeysOr(t.trustedKeys)
	sigPath := modelPath + convert.SignatureSuffix
	sig, sigErr := safefs.ReadRegular(sigPath, 16<<10)
	switch {
	case keys == "" && optIn == "":
		if sigErr == nil {
			kt.why = "signed, but no --trustedKeys to verify " + sigPath + " against"
		}
	case keys != "" && errors.Is(sigErr, os.ErrNotExist):
		kt.why = "not signed (no " + sigPath + ")"
	case keys != "":
		if sigErr != nil {
			return kt, fmt.Errorf("model signature %s: %v", sigPath, sigErr)
		}
		allowed, err := safefs.ReadRegular(keys, 4<<20)
		if err != nil {
			return kt, fmt.Errorf("--trustedKeys=%s: %v", keys, err)
		}
		st, err := f.Stat()
		if err != nil {
			return kt, err
		}
		principal, err := trust.Verify(stdio.NewSectionReader(f, 0, st.Size()), sig, allowed, trust.Namespace)
		switch {
		case errors.Is(err, trust.ErrUntrustedKey):
			kt.why = "signed by a key that is not in " + keys
		case err != nil:
			return kt, fmt.Errorf("model signature %s does not verify: %v", sigPath, err)
		default:
			kt.signer = principal
			kt.trusted, kt.why = true, "signed by "+principal
		}
	}
	if optIn != "" {
		kt.trusted = true
		if kt.signer == "" {
			kt.why = optIn
		}
	}
	return kt, nil
}

// describeKernel is inspect's and benchmark's words for how a fused kernel
// runs by default.
func describeKernel(mode runtime.KernelMode, reason string, kt kernelTrust) string {
	switch mode {
	case runtime.KernelEmbedded:
		return "loaded (trusted: " + kt.why + ")"
	case runtime.KernelRebuilt:
		if kt.why == "" {
			return "rebuilt from its body (embedded binary not trusted)"
		}
		return "rebuilt from its body (embedded binary not trusted: " + kt.why + ")"
	case runtime.KernelInterpreted:
		return "interpreted (" + reason + ")"
	}
	return string(mode)
}

// trustedKeysOr is --trustedKeys, or $GKCONV_TRUSTED_KEYS when it is empty.
func trustedKeysOr(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(TrustedKeysEnv)
}
