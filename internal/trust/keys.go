package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
)

// KeyType is the only SSH key type this package signs and verifies with.
const KeyType = "ssh-ed25519"

// maxKeyFile bounds a private key file (an Ed25519 key is about 400 bytes).
const maxKeyFile = 64 << 10

// PrivateKey is a parsed Ed25519 signing key.
type PrivateKey struct {
	key     ed25519.PrivateKey
	Comment string // the key's comment (OpenSSH keys), e.g. user@host
}

// Public returns the key's public half.
func (k *PrivateKey) Public() ed25519.PublicKey { return k.key.Public().(ed25519.PublicKey) }

// ParsePrivateKey reads an unencrypted Ed25519 private key: OpenSSH's own
// format ("-----BEGIN OPENSSH PRIVATE KEY-----", openssh-key-v1, as written
// by `ssh-keygen -t ed25519 -N ”`) or PKCS#8 ("-----BEGIN PRIVATE KEY-----",
// as written by `openssl genpkey -algorithm ed25519`).
func ParsePrivateKey(pemBytes []byte) (*PrivateKey, error) {
	if len(pemBytes) > maxKeyFile {
		return nil, fmt.Errorf("private key: %d bytes is too large for a key file", len(pemBytes))
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("private key: no PEM block (want -----BEGIN OPENSSH PRIVATE KEY-----)")
	}
	switch block.Type {
	case "OPENSSH PRIVATE KEY":
		return parseOpenSSHPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("private key: PKCS#8: %w", err)
		}
		ek, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("private key: PKCS#8 key is %T; only Ed25519 keys are supported", k)
		}
		return &PrivateKey{key: ek}, nil
	case "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("private key: encrypted (passphrase-protected) keys are not supported")
	default:
		return nil, fmt.Errorf("private key: PEM type %q: only Ed25519 keys are supported (OPENSSH PRIVATE KEY or PKCS#8 PRIVATE KEY)", block.Type)
	}
}

const opensshMagic = "openssh-key-v1\x00"

// parseOpenSSHPrivateKey decodes OpenSSH's key format (PROTOCOL.key):
//
//	"openssh-key-v1\0" string ciphername, string kdfname, string kdfoptions,
//	uint32 nkeys, string publickey[nkeys], string private-section
//
// where the private section is uint32 check, uint32 check, then per key
// string type, key-specific fields (Ed25519: string pub(32), string
// priv(64) = seed||pub), string comment, then padding bytes 1, 2, 3, ...
func parseOpenSSHPrivateKey(b []byte) (*PrivateKey, error) {
	fail := func(format string, a ...any) (*PrivateKey, error) {
		return nil, fmt.Errorf("OpenSSH private key: "+format, a...)
	}
	if !bytes.HasPrefix(b, []byte(opensshMagic)) {
		return fail("missing %q magic", "openssh-key-v1")
	}
	r := &reader{b: b[len(opensshMagic):]}
	cipher, kdf := string(r.string()), string(r.string())
	r.string() // kdf options
	nkeys := r.uint32()
	pubBlob := r.string()
	priv := r.string()
	if r.err != nil {
		return fail("truncated")
	}
	if cipher != "none" || kdf != "none" {
		return fail("encrypted with %q (passphrase-protected keys are not supported; use an unencrypted key, e.g. one kept on an encrypted disk or in a secret store)", cipher)
	}
	if nkeys != 1 {
		return fail("%d keys in one file, want 1", nkeys)
	}
	if len(r.b) != 0 {
		return fail("trailing data after the private section")
	}
	pub, err := parsePublicKeyBlob(pubBlob)
	if err != nil {
		return fail("%v", err)
	}
	if len(priv)%8 != 0 {
		return fail("private section of %d bytes is not padded to 8", len(priv))
	}
	p := &reader{b: priv}
	c1, c2 := p.uint32(), p.uint32()
	typ := string(p.string())
	if p.err != nil {
		return fail("truncated private section")
	}
	if c1 != c2 {
		return fail("check numbers differ (a wrong passphrase or a damaged file)")
	}
	if typ != KeyType {
		return fail("key type %q: only %s keys are supported", typ, KeyType)
	}
	pub2 := p.string()
	sk := p.string()
	comment := p.string()
	if p.err != nil {
		return fail("truncated private section")
	}
	if len(pub2) != ed25519.PublicKeySize || len(sk) != ed25519.PrivateKeySize {
		return fail("Ed25519 key sizes %d/%d, want %d/%d", len(pub2), len(sk), ed25519.PublicKeySize, ed25519.PrivateKeySize)
	}
	for i, c := range p.b {
		if int(c) != i+1 {
			return fail("bad padding")
		}
	}
	key := ed25519.NewKeyFromSeed(sk[:ed25519.SeedSize])
	if !bytes.Equal(key[ed25519.SeedSize:], sk[ed25519.SeedSize:]) || !bytes.Equal(pub2, sk[ed25519.SeedSize:]) || !bytes.Equal(pub, pub2) {
		return fail("public and private halves do not match")
	}
	return &PrivateKey{key: key, Comment: string(comment)}, nil
}

// publicKeyBlob is the SSH wire form of an Ed25519 public key: string
// "ssh-ed25519", string key(32).
func publicKeyBlob(pub ed25519.PublicKey) []byte {
	b := appendString(nil, []byte(KeyType))
	return appendString(b, pub)
}

// parsePublicKeyBlob decodes an Ed25519 public key blob; other key types are
// an error naming the type.
func parsePublicKeyBlob(blob []byte) (ed25519.PublicKey, error) {
	r := &reader{b: blob}
	typ := string(r.string())
	if r.err != nil {
		return nil, errors.New("public key: truncated")
	}
	if typ != KeyType {
		return nil, fmt.Errorf("public key type %q: only %s keys are supported", printable(typ), KeyType)
	}
	k := r.string()
	if r.err != nil || len(k) != ed25519.PublicKeySize || len(r.b) != 0 {
		return nil, errors.New("public key: malformed ssh-ed25519 key")
	}
	return ed25519.PublicKey(bytes.Clone(k)), nil
}

// Fingerprint is OpenSSH's key fingerprint, "SHA256:" + unpadded base64 of
// the sha256 of the key blob (what `ssh-keygen -l` prints).
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(publicKeyBlob(pub))
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// AuthorizedKey is the public key in the one-line form of authorized_keys
// and allowed_signers: "ssh-ed25519 AAAA...".
func AuthorizedKey(pub ed25519.PublicKey) string {
	return KeyType + " " + base64.StdEncoding.EncodeToString(publicKeyBlob(pub))
}

// PublicKeyOf returns the authorized_keys line of a private key file's
// public key (for writing an allowed_signers line: "principal " + this).
func PublicKeyOf(privateKeyPEM []byte) (string, error) {
	k, err := ParsePrivateKey(privateKeyPEM)
	if err != nil {
		return "", err
	}
	return AuthorizedKey(k.Public()), nil
}

// printable shortens and quotes-safe a string taken from untrusted input
// for an error message.
func printable(s string) string {
	const max = 64
	var b []byte
	i := 0
	for ; i < len(s) && len(b) < max; i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			b = fmt.Appendf(b, "\\x%02x", c)
		} else {
			b = append(b, c)
		}
	}
	if i < len(s) {
		b = append(b, "..."...)
	}
	return string(b)
}
