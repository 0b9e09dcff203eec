package convert

import (
	"fmt"
	"io"
	"os"

	"gkconv/internal/kernels/cache"
	"gkconv/internal/safefs"
	"gkconv/internal/trust"
)

// SignatureSuffix names a model's detached signature: model.mindir.sig.
const SignatureSuffix = ".sig"

// readSignKey reads and checks an Ed25519 private key file (OpenSSH or
// PKCS#8, unencrypted).
func readSignKey(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		// As ssh-keygen: a private key others can read is not private.
		return nil, fmt.Errorf("private key readable by others (mode %04o): chmod 600 it", perm)
	}
	if st.Size() > 64<<10 {
		return nil, fmt.Errorf("%d bytes is too large for a key file", st.Size())
	}
	b, err := safefs.ReadRegular(path, 64<<10)
	if err != nil {
		return nil, err
	}
	if _, err := trust.ParsePrivateKey(b); err != nil {
		return nil, err
	}
	return b, nil
}

// signFile writes path+SignatureSuffix, the SSH signature (namespace
// trust.Namespace) of the whole file at path, crash-safely.
func signFile(path string, key []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sig, err := trust.Sign(f, key, trust.Namespace)
	if err != nil {
		return err
	}
	return safefs.WriteOutput(path+SignatureSuffix, 0o644, func(w io.Writer) error {
		_, err := w.Write(sig)
		return err
	})
}

// readTrustedKeys reads an allowed_signers file and checks that it parses.
func readTrustedKeys(path string) ([]byte, error) {
	b, err := safefs.ReadRegular(path, 1<<20)
	if err != nil {
		return nil, err
	}
	if _, err := trust.ParseAllowedSigners(b); err != nil {
		return nil, err
	}
	return b, nil
}

// UseRemoteTrust sets, for the rest of the process, which remote kernel
// cache objects are used (those signed by a key of the allowed_signers
// file trustedKeys; "" for none) — what `benchmark` rebuilds through.
func UseRemoteTrust(trustedKeys string) error {
	var b []byte
	if trustedKeys != "" {
		var err error
		if b, err = readTrustedKeys(trustedKeys); err != nil {
			return fmt.Errorf("--trustedKeys=%s: %w", trustedKeys, err)
		}
	}
	cache.SetRemoteTrust(cache.RemoteTrust{AllowedSigners: b})
	return nil
}
