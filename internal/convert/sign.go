package convert

import (
	"fmt"
	"io"
	"os"

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
	b, err := trust.ReadRegular(path, 64<<10)
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
	return trust.WriteOutput(path+SignatureSuffix, 0o644, func(w io.Writer) error {
		_, err := w.Write(sig)
		return err
	})
}
