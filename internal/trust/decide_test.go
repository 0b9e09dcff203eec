package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTemp(t *testing.T, name, text string) (*os.File, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, p
}

// TestDecideWithoutSignature: nothing said means untrusted; the opt-in flag
// or TrustEnv=1 trusts; a TrustEnv that is not a boolean is an error; trusted
// keys without a .sig leave the model untrusted and say so.
func TestDecideWithoutSignature(t *testing.T) {
	t.Setenv(TrustEnv, "")
	t.Setenv(TrustedKeysEnv, "")
	f, model := openTemp(t, "m.mindir", "model bytes")
	sig := model + ".sig"
	if d, err := (Policy{}).Decide(f, sig); err != nil || d.Trusted || d.Why != "" {
		t.Errorf("no policy: %+v, %v; want untrusted, no reason", d, err)
	}
	if d, err := (Policy{TrustEmbedded: true}).Decide(f, sig); err != nil || !d.Trusted || d.Why != "--trustEmbeddedKernels" {
		t.Errorf("--trustEmbeddedKernels: %+v, %v", d, err)
	}
	t.Setenv(TrustEnv, "1")
	if d, err := (Policy{}).Decide(f, sig); err != nil || !d.Trusted || d.Why != TrustEnv+"=1" {
		t.Errorf("%s=1: %+v, %v", TrustEnv, d, err)
	}
	t.Setenv(TrustEnv, "yes please")
	if _, err := (Policy{}).Decide(f, sig); err == nil || !strings.Contains(err.Error(), TrustEnv) {
		t.Errorf("%s=yes please: err %v, want one naming the variable", TrustEnv, err)
	}
	t.Setenv(TrustEnv, "")
	_, keys := openTemp(t, "allowed_signers", "")
	if d, err := (Policy{TrustedKeys: keys}).Decide(f, sig); err != nil || d.Trusted || !strings.Contains(d.Why, "not signed") {
		t.Errorf("keys, no .sig: %+v, %v; want untrusted, not signed", d, err)
	}
	t.Setenv(TrustedKeysEnv, keys)
	if got := TrustedKeysOr(""); got != keys {
		t.Errorf("TrustedKeysOr(\"\") = %q, want $%s", got, TrustedKeysEnv)
	}
}

// TestDecideBadSignature: a .sig that exists but does not verify is an
// error, never a quiet "untrusted".
func TestDecideBadSignature(t *testing.T) {
	t.Setenv(TrustEnv, "")
	f, model := openTemp(t, "m.mindir", "model bytes")
	if err := os.WriteFile(model+".sig", []byte("not a signature"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, keys := openTemp(t, "allowed_signers", "")
	if _, err := (Policy{TrustedKeys: keys}).Decide(f, model+".sig"); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("malformed .sig: err %v, want 'does not verify'", err)
	}
	if d, err := (Policy{}).Decide(f, model+".sig"); err != nil || d.Trusted || !strings.Contains(d.Why, "no --trustedKeys") {
		t.Errorf("signed, no keys: %+v, %v", d, err)
	}
}
