package trust

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"gkconv/internal/safefs"
)

// Environment variables of the embedded-kernel trust policy.
const (
	// TrustEnv=1 is --trustEmbeddedKernels.
	TrustEnv = "GKCONV_TRUST_EMBEDDED_KERNELS"
	// TrustedKeysEnv is the default of --trustedKeys.
	TrustedKeysEnv = "GKCONV_TRUSTED_KEYS"
)

// Policy is what the user said about native code embedded in models: an
// explicit opt-in (--trustEmbeddedKernels) and the allowed_signers file of
// the keys they trust (--trustedKeys).
type Policy struct {
	TrustEmbedded bool
	TrustedKeys   string // a path; empty means $GKCONV_TRUSTED_KEYS
}

// Decision is the policy applied to one model file.
type Decision struct {
	Trusted bool
	Why     string // "--trustEmbeddedKernels", "signed by alice", or why not trusted
	Signer  string // the verified principal, if any
}

// TrustedKeysOr is flag, or $GKCONV_TRUSTED_KEYS when it is empty.
func TrustedKeysOr(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(TrustedKeysEnv)
}

// Decide applies the policy, the environment and the model's signature file
// sigPath to the model open as f (read through f, so that the verified
// bytes are the loaded ones). A signature that exists but does not verify
// against the trusted keys (a modified model, a malformed .sig, another
// namespace) is an error; one by a key that is not trusted leaves the model
// untrusted.
func (p Policy) Decide(f *os.File, sigPath string) (Decision, error) {
	var d Decision
	optIn := ""
	if p.TrustEmbedded {
		optIn = "--trustEmbeddedKernels"
	} else if v := os.Getenv(TrustEnv); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return d, fmt.Errorf("%s=%s: want 1 or 0", TrustEnv, v)
		}
		if on {
			optIn = TrustEnv + "=1"
		}
	}
	keys := TrustedKeysOr(p.TrustedKeys)
	sig, sigErr := safefs.ReadRegular(sigPath, 16<<10)
	switch {
	case keys == "" && optIn == "":
		if sigErr == nil {
			d.Why = "signed, but no --trustedKeys to verify " + sigPath + " against"
		}
	case keys != "" && errors.Is(sigErr, os.ErrNotExist):
		d.Why = "not signed (no " + sigPath + ")"
	case keys != "":
		if sigErr != nil {
			return d, fmt.Errorf("model signature %s: %v", sigPath, sigErr)
		}
		allowed, err := safefs.ReadRegular(keys, 4<<20)
		if err != nil {
			return d, fmt.Errorf("--trustedKeys=%s: %v", keys, err)
		}
		st, err := f.Stat()
		if err != nil {
			return d, err
		}
		principal, err := Verify(io.NewSectionReader(f, 0, st.Size()), sig, allowed, Namespace)
		switch {
		case errors.Is(err, ErrUntrustedKey):
			d.Why = "signed by a key that is not in " + keys
		case err != nil:
			return d, fmt.Errorf("model signature %s does not verify: %v", sigPath, err)
		default:
			d.Signer = principal
			d.Trusted, d.Why = true, "signed by "+principal
		}
	}
	if optIn != "" {
		d.Trusted = true
		if d.Signer == "" {
			d.Why = optIn
		}
	}
	return d, nil
}
