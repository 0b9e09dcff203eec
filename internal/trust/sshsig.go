package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"
)

// SSH signatures (OpenSSH PROTOCOL.sshsig), detached and armored:
//
//	-----BEGIN SSH SIGNATURE-----
//	base64 of: byte[6] "SSHSIG", uint32 1, string publickey, string namespace,
//	           string reserved, string hash_algorithm, string signature
//	-----END SSH SIGNATURE-----
//
// where signature is the key's SSH signature (string "ssh-ed25519", string
// sig(64)) of: byte[6] "SSHSIG", string namespace, string reserved, string
// hash_algorithm, string H(message). `ssh-keygen -Y verify` checks what Sign
// writes and Verify checks what `ssh-keygen -Y sign` writes.

// Namespace is the SSHSIG namespace of gkconv model signatures (ssh-keygen's
// -n): a signature made for another purpose (e.g. "file", "git") never
// verifies as a model signature.
const Namespace = "gkconv-model"

const (
	sigMagic   = "SSHSIG"
	sigVersion = 1
	sigBegin   = "-----BEGIN SSH SIGNATURE-----"
	sigEnd     = "-----END SSH SIGNATURE-----"
	hashSign   = "sha512" // what Sign uses (ssh-keygen's default)
	maxSigFile = 16 << 10 // an Ed25519 signature is about 300 bytes armored
)

// Errors Verify wraps, for errors.Is; the messages say more.
var (
	ErrMalformed     = errors.New("malformed SSH signature")
	ErrNamespace     = errors.New("signature made for another namespace")
	ErrUntrustedKey  = errors.New("signing key is not an allowed signer")
	ErrBadSignature  = errors.New("signature does not match the data")
	ErrAllowedSigner = errors.New("bad allowed_signers file")
)

// Signature is a parsed SSH signature.
type Signature struct {
	PublicKey ed25519.PublicKey
	Namespace string
	HashAlg   string // "sha256" or "sha512"
	sig       []byte // the raw 64-byte Ed25519 signature
}

// Fingerprint is the signing key's OpenSSH fingerprint (SHA256:...).
func (s *Signature) Fingerprint() string { return Fingerprint(s.PublicKey) }

// Sign reads data to its end, hashing it as it goes (nothing is buffered),
// and returns an armored SSH signature of it in namespace, made with the
// unencrypted Ed25519 private key privateKeyPEM (see ParsePrivateKey).
func Sign(data io.Reader, privateKeyPEM []byte, namespace string) ([]byte, error) {
	if namespace == "" {
		return nil, errors.New("sign: empty namespace")
	}
	key, err := ParsePrivateKey(privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	h := sha512.New()
	if _, err := io.Copy(h, data); err != nil {
		return nil, fmt.Errorf("sign: reading the data: %w", err)
	}
	sig := ed25519.Sign(key.key, signedData(namespace, hashSign, h.Sum(nil)))
	blob := []byte(sigMagic)
	blob = appendUint32(blob, sigVersion)
	blob = appendString(blob, publicKeyBlob(key.Public()))
	blob = appendString(blob, []byte(namespace))
	blob = appendString(blob, nil) // reserved
	blob = appendString(blob, []byte(hashSign))
	blob = appendString(blob, appendString(appendString(nil, []byte(KeyType)), sig))
	return armor(blob), nil
}

// signedData is what the key signs: "SSHSIG", namespace, reserved,
// hash_algorithm, H(message).
func signedData(namespace, hashAlg string, digest []byte) []byte {
	b := []byte(sigMagic)
	b = appendString(b, []byte(namespace))
	b = appendString(b, nil)
	b = appendString(b, []byte(hashAlg))
	return appendString(b, digest)
}

// armor wraps blob as ssh-keygen does: base64 in lines of 70 characters.
func armor(blob []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b bytes.Buffer
	b.WriteString(sigBegin + "\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n")
	b.WriteString(sigEnd + "\n")
	return b.Bytes()
}

// dearmor returns the blob of an armored signature: the header at the very
// start, then base64 (whitespace ignored), then the footer and nothing but
// whitespace after it.
func dearmor(sig []byte) ([]byte, error) {
	if len(sig) > maxSigFile {
		return nil, fmt.Errorf("%w: %d bytes is too large for a signature", ErrMalformed, len(sig))
	}
	rest, ok := bytes.CutPrefix(sig, []byte(sigBegin))
	if !ok {
		return nil, fmt.Errorf("%w: missing %q header", ErrMalformed, sigBegin)
	}
	if r, ok := bytes.CutPrefix(rest, []byte("\r\n")); ok {
		rest = r
	} else if r, ok := bytes.CutPrefix(rest, []byte("\n")); ok {
		rest = r
	} else {
		return nil, fmt.Errorf("%w: no line break after the header", ErrMalformed)
	}
	i := bytes.Index(rest, []byte("\n"+sigEnd))
	if i < 0 {
		return nil, fmt.Errorf("%w: missing %q footer", ErrMalformed, sigEnd)
	}
	if len(bytes.TrimSpace(rest[i+1+len(sigEnd):])) != 0 {
		return nil, fmt.Errorf("%w: data after the footer", ErrMalformed)
	}
	body := bytes.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, rest[:i])
	blob := make([]byte, base64.StdEncoding.DecodedLen(len(body)))
	n, err := base64.StdEncoding.Decode(blob, body)
	if err != nil {
		return nil, fmt.Errorf("%w: base64: %v", ErrMalformed, err)
	}
	return blob[:n], nil
}

// ParseSignature decodes an armored SSH signature (no check of the data or
// of who signed).
func ParseSignature(armored []byte) (*Signature, error) {
	blob, err := dearmor(armored)
	if err != nil {
		return nil, err
	}
	return parseSignatureBlob(blob)
}

func parseSignatureBlob(blob []byte) (*Signature, error) {
	bad := func(format string, a ...any) (*Signature, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, a...)...)
	}
	if !bytes.HasPrefix(blob, []byte(sigMagic)) {
		return bad("missing %q magic", sigMagic)
	}
	r := &reader{b: blob[len(sigMagic):]}
	version := r.uint32()
	if r.err != nil {
		return bad("truncated")
	}
	if version != sigVersion {
		return bad("version %d, want %d", version, sigVersion)
	}
	pubBlob := r.string()
	ns := r.string()
	r.string() // reserved: ignored, as PROTOCOL.sshsig says
	alg := string(r.string())
	sigBlob := r.string()
	if r.err != nil {
		return bad("truncated")
	}
	if len(r.b) != 0 {
		return bad("trailing data")
	}
	pub, err := parsePublicKeyBlob(pubBlob)
	if err != nil {
		return bad("%v", err)
	}
	if len(ns) == 0 {
		return bad("empty namespace")
	}
	if alg != "sha256" && alg != "sha512" {
		return bad("hash algorithm %q (want sha256 or sha512)", printable(alg))
	}
	sr := &reader{b: sigBlob}
	styp := string(sr.string())
	sig := sr.string()
	if sr.err != nil || len(sr.b) != 0 {
		return bad("malformed signature field")
	}
	if styp != KeyType {
		return bad("signature type %q for an %s key", printable(styp), KeyType)
	}
	if len(sig) != ed25519.SignatureSize {
		return bad("Ed25519 signature of %d bytes, want %d", len(sig), ed25519.SignatureSize)
	}
	return &Signature{PublicKey: pub, Namespace: string(ns), HashAlg: alg, sig: bytes.Clone(sig)}, nil
}

// Verify checks that sig (armored, as Sign or `ssh-keygen -Y sign` write
// it) is a signature of data in namespace by a key that allowedSigners (the
// contents of an allowed_signers file, ssh-keygen(1)'s format) allows for
// that namespace at the current time, and returns the principals of the
// matching line (as `ssh-keygen -Y find-principals` prints them). The
// signature and the key are checked before data is read; data is then read
// to its end and hashed as it goes. Errors wrap ErrMalformed,
// ErrNamespace, ErrUntrustedKey, ErrBadSignature or ErrAllowedSigner.
func Verify(data io.Reader, sig []byte, allowedSigners []byte, namespace string) (principal string, err error) {
	return verifyAt(data, sig, allowedSigners, namespace, time.Now())
}

func verifyAt(data io.Reader, sig, allowedSigners []byte, namespace string, now time.Time) (string, error) {
	if namespace == "" {
		return "", errors.New("verify: empty namespace")
	}
	s, err := ParseSignature(sig)
	if err != nil {
		return "", err
	}
	if s.Namespace != namespace {
		return "", fmt.Errorf("%w: the signature is for namespace %q, want %q", ErrNamespace, printable(s.Namespace), namespace)
	}
	signers, err := ParseAllowedSigners(allowedSigners)
	if err != nil {
		return "", err
	}
	principal, err := signers.find(s.PublicKey, namespace, now)
	if err != nil {
		return "", err
	}
	var h hash.Hash = sha512.New()
	if s.HashAlg == "sha256" {
		h = sha256.New()
	}
	if _, err := io.Copy(h, data); err != nil {
		return "", fmt.Errorf("verify: reading the data: %w", err)
	}
	if !ed25519.Verify(s.PublicKey, signedData(namespace, s.HashAlg, h.Sum(nil)), s.sig) {
		return "", fmt.Errorf("%w: the data was modified after signing, or the signature belongs to other data (key %s)", ErrBadSignature, s.Fingerprint())
	}
	return principal, nil
}
