package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// marshalOpenSSH writes k in OpenSSH's unencrypted private key format (what
// `ssh-keygen -t ed25519 -N ”` writes), for tests that run without
// ssh-keygen and as fuzz seeds.
func marshalOpenSSH(k ed25519.PrivateKey, comment string) []byte {
	pub := k.Public().(ed25519.PublicKey)
	priv := appendUint32(appendUint32(nil, 0x5eed5eed), 0x5eed5eed)
	priv = appendString(priv, []byte(KeyType))
	priv = appendString(priv, pub)
	priv = appendString(priv, k)
	priv = appendString(priv, []byte(comment))
	for i := 1; len(priv)%8 != 0; i++ {
		priv = append(priv, byte(i))
	}
	b := []byte(opensshMagic)
	b = appendString(b, []byte("none"))
	b = appendString(b, []byte("none"))
	b = appendString(b, nil)
	b = appendUint32(b, 1)
	b = appendString(b, publicKeyBlob(pub))
	b = appendString(b, priv)
	return pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: b})
}

func newKey(t testing.TB) (ed25519.PublicKey, []byte) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, marshalOpenSSH(priv, "test@gkconv")
}

func randomData(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignVerifyRoundTrip(t *testing.T) {
	pub, key := newKey(t)
	data := randomData(t, 1<<20+7)
	sig, err := Sign(bytes.NewReader(data), key, Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(sig, []byte("-----BEGIN SSH SIGNATURE-----\n")) || !bytes.HasSuffix(sig, []byte("\n-----END SSH SIGNATURE-----\n")) {
		t.Fatalf("not an armored SSH signature:\n%s", sig)
	}
	allowed := []byte("# model signers\n\nalice@example.com " + AuthorizedKey(pub) + " alice's laptop\n")
	p, err := Verify(bytes.NewReader(data), sig, allowed, Namespace)
	if err != nil || p != "alice@example.com" {
		t.Fatalf("Verify = %q, %v", p, err)
	}
	s, err := ParseSignature(sig)
	if err != nil || s.Namespace != Namespace || s.HashAlg != "sha512" || s.Fingerprint() != Fingerprint(pub) {
		t.Fatalf("ParseSignature = %+v, %v", s, err)
	}
	// The data is read through a reader that returns a byte at a time: the
	// hash streams.
	if _, err := Verify(iotest.OneByteReader(bytes.NewReader(data[:4096])), mustSign(t, data[:4096], key), allowed, Namespace); err != nil {
		t.Fatal(err)
	}
}

func mustSign(t testing.TB, data, key []byte) []byte {
	t.Helper()
	sig, err := Sign(bytes.NewReader(data), key, Namespace)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// rearmor re-encodes a (modified) signature blob.
func rearmor(t *testing.T, sig []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	blob, err := dearmor(sig)
	if err != nil {
		t.Fatal(err)
	}
	return armor(edit(bytes.Clone(blob)))
}

func TestVerifyFailures(t *testing.T) {
	pub, key := newKey(t)
	otherPub, otherKey := newKey(t)
	data := randomData(t, 10000)
	sig := mustSign(t, data, key)
	allowed := []byte("alice@example.com " + AuthorizedKey(pub) + "\n")
	tampered := bytes.Clone(data)
	tampered[5000] ^= 1

	cases := []struct {
		name    string
		data    []byte
		sig     []byte
		allowed []byte
		ns      string
		want    error
		msg     string
	}{
		{"tampered data", tampered, sig, allowed, Namespace, ErrBadSignature, "modified after signing"},
		{"data one byte short", data[:len(data)-1], sig, allowed, Namespace, ErrBadSignature, "modified"},
		{"wrong namespace", data, sig, allowed, "file", ErrNamespace, `namespace "gkconv-model", want "file"`},
		{"unknown key", data, sig, []byte("bob@example.com " + AuthorizedKey(otherPub) + "\n"), Namespace, ErrUntrustedKey, "is not in the allowed signers file"},
		{"empty allowed signers", data, sig, nil, Namespace, ErrUntrustedKey, Fingerprint(pub)},
		{"signed by another key", data, mustSign(t, data, otherKey), allowed, Namespace, ErrUntrustedKey, Fingerprint(otherPub)},
		{"truncated armor", data, sig[:len(sig)/2], allowed, Namespace, ErrMalformed, "missing"},
		{"garbage", data, []byte("this is not a signature"), allowed, Namespace, ErrMalformed, "header"},
		{"empty signature", data, nil, allowed, Namespace, ErrMalformed, "header"},
		{"bad base64", data, []byte("-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----\n"), allowed, Namespace, ErrMalformed, "base64"},
		{"truncated blob", data, rearmor(t, sig, func(b []byte) []byte { return b[:len(b)-10] }), allowed, Namespace, ErrMalformed, "truncated"},
		{"trailing data in blob", data, rearmor(t, sig, func(b []byte) []byte { return append(b, 0) }), allowed, Namespace, ErrMalformed, "trailing"},
		{"version 2", data, rearmor(t, sig, func(b []byte) []byte { b[9] = 2; return b }), allowed, Namespace, ErrMalformed, "version 2"},
		{"flipped signature bit", data, rearmor(t, sig, func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), allowed, Namespace, ErrBadSignature, "modified"},
		{"malformed allowed signers", data, sig, []byte("alice@example.com ssh-ed25519 !!!\n"), Namespace, ErrAllowedSigner, "line 1"},
		{"data after footer", data, append(bytes.Clone(sig), "x"...), allowed, Namespace, ErrMalformed, "after the footer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Verify(bytes.NewReader(c.data), c.sig, c.allowed, c.ns)
			if err == nil {
				t.Fatalf("verified (principal %q)", p)
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q, want %v containing %q", err, c.want, c.msg)
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		_, err := Verify(iotest.ErrReader(errors.New("disk on fire")), sig, allowed, Namespace)
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("error %v", err)
		}
		if _, err := Sign(iotest.ErrReader(errors.New("disk on fire")), key, Namespace); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("Sign error %v", err)
		}
	})
	t.Run("unknown key never reads the data", func(t *testing.T) {
		_, err := Verify(iotest.ErrReader(errors.New("read")), sig, []byte("bob "+AuthorizedKey(otherPub)+"\n"), Namespace)
		if !errors.Is(err, ErrUntrustedKey) {
			t.Fatalf("error %v", err)
		}
	})
}

func TestAllowedSignersOptions(t *testing.T) {
	pub, key := newKey(t)
	data := []byte("model bytes")
	sig := mustSign(t, data, key)
	k := AuthorizedKey(pub)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ok := []struct{ allowed, principal string }{
		{`alice ` + k, "alice"},
		{`  alice,bob@example.com   ` + k + ` comment with spaces`, "alice,bob@example.com"},
		{`"alice smith" ` + k, "alice smith"},
		{`alice namespaces="gkconv-*" ` + k, "alice"},
		{`alice NAMESPACES="file,gkconv-model" ` + k, "alice"},
		{`alice valid-after="20250101",valid-before="20260101Z" ` + k, "alice"},
		{`alice valid-after="202501011200Z" ` + k, "alice"},
		{"# comment\nalice namespaces=\"file\" " + k + "\nbob " + k, "bob"}, // first line refuses the namespace
		{"carol ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7\nalice " + k, "alice"},
		{"alice " + k + "\r\n", "alice"},
	}
	for _, c := range ok {
		p, err := verifyAt(bytes.NewReader(data), sig, []byte(c.allowed), Namespace, now)
		if err != nil || p != c.principal {
			t.Errorf("%q: got %q, %v; want %q", c.allowed, p, err, c.principal)
		}
	}
	bad := []struct{ allowed, msg string }{
		{`alice namespaces="file,git" ` + k, `not allowed for namespace "gkconv-model"`},
		{`alice namespaces="*,!gkconv-model" ` + k, "not allowed for namespace"},
		{`alice valid-before="20250101" ` + k, "expired"},
		{`alice valid-after="20300101" ` + k, "not valid before"},
		{`*@example.com cert-authority ` + k, "cert-authority"},
		{`alice ` + k[:len(k)-4], "line 1"},
		{`alice unknown-option ` + k, "unknown key option"},
		{`alice namespaces="a",namespaces="b" ` + k, "multiple"},
		{`alice namespaces="gkconv-model ` + k, "quote"},
		{`alice valid-after="2025" ` + k, "valid-after"},
		{`alice valid-after="20260101",valid-before="20250101" ` + k, "before"},
		{`alice`, "nothing else"},
		{`alice namespaces="x"`, "missing key"},
		{`alice ssh-ed25519 ` + base64.StdEncoding.EncodeToString(appendString(nil, []byte("ssh-rsa"))), "does not match"},
	}
	for _, c := range bad {
		_, err := verifyAt(bytes.NewReader(data), sig, []byte(c.allowed), Namespace, now)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want one containing %q", c.allowed, err, c.msg)
		}
	}
}

func TestMatchPatternList(t *testing.T) {
	for _, c := range []struct {
		s, list string
		want    int
	}{
		{"gkconv-model", "gkconv-model", 1},
		{"gkconv-model", "file,gkconv-*", 1},
		{"gkconv-model", "g?conv-mode?", 1},
		{"gkconv-model", "file", 0},
		{"gkconv-model", "*,!gkconv-model", -1},
		{"gkconv-model", "GKCONV-MODEL", 0},
		{"a", "*a*a*a*a*a*a*a*a*a*a*b", 0},
	} {
		if got := matchPatternList(c.s, c.list); got != c.want {
			t.Errorf("matchPatternList(%q, %q) = %d, want %d", c.s, c.list, got, c.want)
		}
	}
}

func TestParsePrivateKeyErrors(t *testing.T) {
	_, key := newKey(t)
	block, _ := pem.Decode(key)
	reenc := func(b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: b}) }
	for _, c := range []struct {
		name string
		in   []byte
		msg  string
	}{
		{"empty", nil, "no PEM block"},
		{"rsa pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte{1}}), "only Ed25519"},
		{"truncated", reenc(block.Bytes[:len(block.Bytes)-20]), "truncated"},
		{"no magic", reenc(block.Bytes[3:]), "magic"},
		{"encrypted", reenc(bytes.Replace(block.Bytes, []byte("\x00\x00\x00\x04none\x00\x00\x00\x04none"), []byte("\x00\x00\x00\x04nonf\x00\x00\x00\x04none"), 1)), "encrypted"},
	} {
		if _, err := ParsePrivateKey(c.in); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.msg)
		}
	}
	if _, err := Sign(strings.NewReader("x"), nil, Namespace); err == nil || !strings.Contains(err.Error(), "sign:") {
		t.Errorf("Sign with no key: %v", err)
	}
}

// --- interoperability with OpenSSH's ssh-keygen ---

func needSSHKeygen(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not found (install openssh-client): skipping the OpenSSH interoperability test")
	}
	return p
}

func run(t *testing.T, stdin io.Reader, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sshKey generates an ed25519 key with ssh-keygen and returns the private
// key path and an allowed_signers file for principal.
func sshKey(t *testing.T, keygen, dir, name, principal string, extra ...string) (keyPath, allowedPath string) {
	t.Helper()
	keyPath = filepath.Join(dir, name)
	if out, err := run(t, nil, keygen, append([]string{"-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", keyPath}, extra...)...); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(keyPath + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowedPath = filepath.Join(dir, name+".allowed_signers")
	if err := os.WriteFile(allowedPath, []byte(principal+" "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyPath, allowedPath
}

func TestSSHKeygenVerifiesOurSignature(t *testing.T) {
	keygen := needSSHKeygen(t)
	dir := t.TempDir()
	keyPath, allowedPath := sshKey(t, keygen, dir, "k", "alice@example.com")
	key, _ := os.ReadFile(keyPath)
	model := filepath.Join(dir, "model.mindir")
	data := randomData(t, 3<<20+123)
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(model)
	sig, err := Sign(f, key, Namespace)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model+".sig", sig, 0o644); err != nil {
		t.Fatal(err)
	}
	verify := func(path string) (string, error) {
		in, _ := os.Open(path)
		defer in.Close()
		return run(t, in, keygen, "-Y", "verify", "-f", allowedPath, "-I", "alice@example.com", "-n", Namespace, "-s", model+".sig")
	}
	out, err := verify(model)
	if err != nil || !strings.Contains(out, `Good "gkconv-model" signature for alice@example.com`) {
		t.Fatalf("ssh-keygen -Y verify rejected our signature: %v: %s", err, out)
	}
	// Ed25519 is deterministic: ssh-keygen's own signature of the same file
	// is byte-identical to ours.
	if out, err := run(t, nil, keygen, "-Y", "sign", "-f", keyPath, "-n", Namespace, model); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v: %s", err, out)
	}
	if theirs, _ := os.ReadFile(model + ".sig"); !bytes.Equal(theirs, sig) {
		t.Errorf("ssh-keygen's signature differs from ours:\nours:\n%s\ntheirs:\n%s", sig, theirs)
	}
	// and ssh-keygen refuses a tampered file with our signature
	os.WriteFile(model+".sig", sig, 0o644)
	data[len(data)/2] ^= 0x80
	os.WriteFile(model, data, 0o644)
	if out, err := verify(model); err == nil {
		t.Fatalf("ssh-keygen verified a tampered file: %s", out)
	}
}

func TestWeVerifySSHKeygenSignature(t *testing.T) {
	keygen := needSSHKeygen(t)
	dir := t.TempDir()
	keyPath, allowedPath := sshKey(t, keygen, dir, "k", "ci@build")
	allowed, _ := os.ReadFile(allowedPath)
	model := filepath.Join(dir, "model.mindir")
	data := randomData(t, 1<<20)
	os.WriteFile(model, data, 0o644)
	for _, hashalg := range []string{"", "sha256", "sha512"} {
		args := []string{"-Y", "sign", "-f", keyPath, "-n", Namespace}
		if hashalg != "" {
			args = append(args, "-O", "hashalg="+hashalg)
		}
		if out, err := run(t, nil, keygen, append(args, model)...); err != nil {
			t.Fatalf("ssh-keygen -Y sign: %v: %s", err, out)
		}
		sig, _ := os.ReadFile(model + ".sig")
		p, err := Verify(bytes.NewReader(data), sig, allowed, Namespace)
		if err != nil || p != "ci@build" {
			t.Fatalf("hashalg %q: Verify = %q, %v", hashalg, p, err)
		}
		os.Remove(model + ".sig")
	}
	// a signature for another namespace (ssh-keygen's "file")
	if out, err := run(t, nil, keygen, "-Y", "sign", "-f", keyPath, "-n", "file", model); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v: %s", err, out)
	}
	sig, _ := os.ReadFile(model + ".sig")
	if _, err := Verify(bytes.NewReader(data), sig, allowed, Namespace); !errors.Is(err, ErrNamespace) {
		t.Fatalf("file-namespace signature: %v", err)
	}
	// a key that is not in allowed_signers
	otherKey, _ := sshKey(t, keygen, dir, "other", "mallory")
	os.Remove(model + ".sig")
	run(t, nil, keygen, "-Y", "sign", "-f", otherKey, "-n", Namespace, model)
	sig, _ = os.ReadFile(model + ".sig")
	if _, err := Verify(bytes.NewReader(data), sig, allowed, Namespace); !errors.Is(err, ErrUntrustedKey) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestSSHKeygenKeys(t *testing.T) {
	keygen := needSSHKeygen(t)
	dir := t.TempDir()
	// a passphrase-protected key and an RSA key are refused clearly
	enc := filepath.Join(dir, "enc")
	if out, err := run(t, nil, keygen, "-q", "-t", "ed25519", "-N", "secret", "-f", enc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b, _ := os.ReadFile(enc)
	if _, err := ParsePrivateKey(b); err == nil || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("encrypted key: %v", err)
	}
	rsa := filepath.Join(dir, "rsa")
	if out, err := run(t, nil, keygen, "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsa); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b, _ = os.ReadFile(rsa)
	if _, err := ParsePrivateKey(b); err == nil || !strings.Contains(err.Error(), `"ssh-rsa": only ssh-ed25519`) {
		t.Errorf("rsa key: %v", err)
	}
	// PublicKeyOf agrees with ssh-keygen's .pub
	keyPath, _ := sshKey(t, keygen, dir, "k", "x")
	priv, _ := os.ReadFile(keyPath)
	pub, _ := os.ReadFile(keyPath + ".pub")
	got, err := PublicKeyOf(priv)
	if err != nil || !strings.HasPrefix(string(pub), got+" ") {
		t.Errorf("PublicKeyOf = %q, %v; ssh-keygen: %q", got, err, pub)
	}
	k, _ := ParsePrivateKey(priv)
	if fp, _ := run(t, nil, keygen, "-l", "-f", keyPath+".pub"); !strings.Contains(fp, Fingerprint(k.Public())) {
		t.Errorf("fingerprint %s, ssh-keygen -l: %s", Fingerprint(k.Public()), fp)
	}
}

func TestPKCS8Key(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not found")
	}
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "k.pem")
	if out, err := run(t, nil, openssl, "genpkey", "-algorithm", "ed25519", "-out", keyPath); err != nil {
		t.Skipf("openssl genpkey ed25519: %v: %s", err, out)
	}
	key, _ := os.ReadFile(keyPath)
	pub, err := PublicKeyOf(key)
	if err != nil {
		t.Fatal(err)
	}
	sig := mustSign(t, []byte("data"), key)
	if _, err := Verify(strings.NewReader("data"), sig, []byte("p "+pub+"\n"), Namespace); err != nil {
		t.Fatal(err)
	}
}

// FuzzParse feeds the signature, allowed_signers and private key parsers
// (and Verify, which runs them all) arbitrary bytes: errors, never panics.
func FuzzParse(f *testing.F) {
	pub, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	key := marshalOpenSSH(priv, "seed")
	sig, _ := Sign(strings.NewReader("data"), key, Namespace)
	allowed := []byte(`a,b namespaces="gkconv-*",valid-after="20200101Z" ` + AuthorizedKey(pub) + " c\n# x\n\"q q\" cert-authority ssh-rsa AAAAB3NzaC1yc2E=\n")
	f.Add(sig, allowed, key)
	f.Add([]byte("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n"), []byte("x"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----\n"))
	f.Add([]byte{}, []byte(`p valid-before="20300101",namespaces="\"x" ssh-ed25519 AAAA`), []byte{})
	f.Fuzz(func(t *testing.T, sig, allowed, key []byte) {
		if s, err := ParseSignature(sig); err == nil && (len(s.PublicKey) != ed25519.PublicKeySize || s.Namespace == "") {
			t.Fatalf("accepted a malformed signature: %+v", s)
		}
		_, _ = parseSignatureBlob(sig)     // the raw blob, past base64
		_, _ = parseOpenSSHPrivateKey(key) // the raw key, past PEM
		_, _ = ParseAllowedSigners(allowed)
		if k, err := ParsePrivateKey(key); err == nil {
			if s2, err := Sign(strings.NewReader("x"), key, Namespace); err != nil {
				t.Fatalf("parsed key does not sign: %v", err)
			} else if _, err := Verify(strings.NewReader("x"), s2, []byte("p "+AuthorizedKey(k.Public())), Namespace); err != nil {
				t.Fatalf("own signature does not verify: %v", err)
			}
		}
		_, _ = Verify(strings.NewReader("data"), sig, allowed, Namespace)
	})
}

// TestAllowedSignersAgreesWithSSHKeygen: for each allowed_signers file,
// Verify accepts exactly when `ssh-keygen -Y verify -I <principal>` does.
func TestAllowedSignersAgreesWithSSHKeygen(t *testing.T) {
	keygen := needSSHKeygen(t)
	dir := t.TempDir()
	keyPath, _ := sshKey(t, keygen, dir, "k", "alice")
	priv, _ := os.ReadFile(keyPath)
	k, _ := PublicKeyOf(priv)
	_, otherKey := newKey(t)
	other, _ := PublicKeyOf(otherKey)
	data := []byte("the model")
	sig := mustSign(t, data, priv)
	model, sigPath := filepath.Join(dir, "m"), filepath.Join(dir, "m.sig")
	os.WriteFile(model, data, 0o644)
	os.WriteFile(sigPath, sig, 0o644)
	past, future := time.Now().AddDate(-1, 0, 0).UTC().Format("20060102"), time.Now().AddDate(1, 0, 0).UTC().Format("20060102")
	for _, allowed := range []string{
		"alice " + k,
		"alice,bob " + k,
		"a* " + k,
		`alice namespaces="gkconv-model" ` + k,
		`alice namespaces="gkconv-*,file" ` + k,
		`alice namespaces="file" ` + k,
		`alice namespaces="*,!gkconv-model" ` + k,
		`alice valid-after="` + past + `Z" ` + k,
		`alice valid-after="` + future + `Z" ` + k,
		`alice valid-before="` + past + `Z" ` + k,
		`alice valid-before="` + future + `Z",namespaces="gkconv-model" ` + k,
		`alice cert-authority ` + k,
		"alice " + other,
		"# alice " + k,
		"alice namespaces=\"file\" " + k + "\nalice " + k,
	} {
		path := filepath.Join(dir, "allowed")
		os.WriteFile(path, []byte(allowed+"\n"), 0o644)
		in, _ := os.Open(model)
		out, err := run(t, in, keygen, "-Y", "verify", "-f", path, "-I", "alice", "-n", Namespace, "-s", sigPath)
		in.Close()
		theirs := err == nil
		_, ourErr := Verify(bytes.NewReader(data), sig, []byte(allowed+"\n"), Namespace)
		if ours := ourErr == nil; ours != theirs {
			t.Errorf("%q: ours accepts=%v (%v), ssh-keygen accepts=%v (%s)", allowed, ours, ourErr, theirs, strings.TrimSpace(out))
		}
	}
}
