package cache

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"gkconv/internal/trust"
)

// What a remote cache may make this process run (issue 32 S3). A server
// that answers a key with a self-consistent object (a valid ELF and a
// matching sha256 sidecar) used to get it dlopen'ed by the kernel
// self-check and by benchmark, stored in the local cache and embedded in
// every model. Now an object from a remote cache is used only when it
// carries an SSH signature (<object>.sig, namespace RemoteNamespace) by a
// key in the allowed_signers file the user trusts (SetRemoteTrust:
// --trustedKeys / GKCONV_TRUSTED_KEYS); anything else is ignored, and
// the kernel compiled locally. Uploads are signed with --signKey when one
// is given. The local cache only ever holds objects compiled here or
// verified that way, so a later run without the server trusts it as it
// trusts the folder.

// RemoteNamespace is the SSH signature namespace of remote cache objects
// (distinct from models', so a signature of one is never taken for the
// other).
const RemoteNamespace = "gkconv-kernel-cache"

// sigExt names an object's detached signature on the server.
const sigExt = ".sig"

// maxSigSize bounds a signature read from a server.
const maxSigSize = 16 << 10

// RemoteTrust is the process's trust in remote cache objects.
type RemoteTrust struct {
	// AllowedSigners is an allowed_signers file's content (ssh-keygen
	// format); nil: no remote object is used.
	AllowedSigners []byte
	// SignKey is the private key (OpenSSH PEM) uploads are signed with;
	// nil: uploads are unsigned (other machines will not use them).
	SignKey []byte
}

var (
	remoteTrustMu sync.RWMutex
	remoteTrust   RemoteTrust
	warnedNoTrust atomic.Bool
)

// SetRemoteTrust sets what remote cache objects this process uses and how
// it signs its uploads.
func SetRemoteTrust(t RemoteTrust) {
	remoteTrustMu.Lock()
	remoteTrust = t
	remoteTrustMu.Unlock()
}

func currentRemoteTrust() RemoteTrust {
	remoteTrustMu.RLock()
	defer remoteTrustMu.RUnlock()
	return remoteTrust
}

// verifyRemote checks object b's signature sig against the trusted
// signers; "" when b may be used, else why not.
func verifyRemote(b, sig []byte) string {
	t := currentRemoteTrust()
	if t.AllowedSigners == nil {
		return "no trusted signers are configured (--trustedKeys or GKCONV_TRUSTED_KEYS)"
	}
	if sig == nil {
		return "unsigned"
	}
	if _, err := trust.Verify(bytes.NewReader(b), sig, t.AllowedSigners, RemoteNamespace); err != nil {
		return "signature does not verify: " + err.Error()
	}
	return ""
}

// signUpload is the signature of an upload, nil without a signing key.
func signUpload(b []byte) []byte {
	t := currentRemoteTrust()
	if t.SignKey == nil {
		return nil
	}
	sig, err := trust.Sign(bytes.NewReader(b), t.SignKey, RemoteNamespace)
	if err != nil {
		slog.Warn(fmt.Sprintf("remote kernel cache: signing an upload: %v (uploaded unsigned)", err))
		return nil
	}
	return sig
}
