package cache

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gkconv/internal/trust"
)

// Provenance of local cache entries (issue 32 S3). The folder checks
// (CheckDir, readTrusted) keep other users out, but not whatever
// else fills the folder as this user: a CI cache restored from a shared
// store (actions/cache, a build-cache tarball), a copy from another
// machine, a remote object stored under trust that has since been
// withdrawn. So every entry carries a provenance record, <entry>.prov:
//
//	gkconv-kernel-provenance 1 <origin> <hmac>
//
// where origin is "local" (compiled by this user's converter) or
// "remote" (fetched from a remote cache; its SSH signature is kept beside
// it as <entry>.sig and checked again against the trusted signers on
// every use, so withdrawing a key withdraws its objects), and hmac is
// HMAC-SHA256, keyed by a secret of this user's kept outside the cache
// (ProvenanceKeyEnv, default os.UserConfigDir()/gkconv/kernel-cache.key,
// mode 0600), of the origin, the entry's name and its sha256. A server or
// a restored folder cannot make one without the secret; an entry without
// a valid record is compiled again and overwritten.

// ProvenanceKeyEnv names the file holding the cache provenance secret.
const ProvenanceKeyEnv = "GKCONV_KERNEL_CACHE_KEY"

const (
	provExt    = ".prov"
	provMagic  = "gkconv-kernel-provenance"
	originHere = "local"
	originFar  = "remote"
)

var (
	provOnce   sync.Once
	provSecret []byte
)

// provenanceKeyPath is where the provenance secret is kept.
func provenanceKeyPath() (string, error) {
	if p := os.Getenv(ProvenanceKeyEnv); p != "" {
		return p, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration folder for it (set %s): %w", ProvenanceKeyEnv, err)
	}
	return filepath.Join(d, "gkconv", "kernel-cache.key"), nil
}

// secretFor returns the process's provenance secret. When the secret file
// cannot be used, a random secret for this process only is used instead
// (entries stored now are trusted in this run and compiled again by later
// ones), with one warning.
func secretFor(cacheRoot string) []byte {
	provOnce.Do(func() {
		path, err := provenanceKeyPath()
		if err == nil {
			if rel, rerr := filepath.Rel(cacheRoot, path); rerr == nil && !strings.HasPrefix(rel, "..") {
				err = fmt.Errorf("%s is inside the kernel cache %s, which is what it vouches for", path, cacheRoot)
			}
		}
		if err == nil {
			provSecret, err = trust.LoadOrCreateSecret(path)
		}
		if err != nil {
			provSecret = make([]byte, 32)
			rand.Read(provSecret)
			slog.Warn(fmt.Sprintf("kernel cache: provenance secret not usable (%v): kernels cached now are trusted by this run only", err))
		}
	})
	return provSecret
}

func provenanceMAC(secret []byte, origin, name, sum string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(provMagic + " 1\x00" + origin + "\x00" + name + "\x00" + sum))
	return hex.EncodeToString(m.Sum(nil))
}

// provenanceRecord is the content of <entry>.prov.
func provenanceRecord(root, origin, name, sum string) []byte {
	return []byte(provMagic + " 1 " + origin + " " + provenanceMAC(secretFor(root), origin, name, sum) + "\n")
}

// checkProvenance returns nil when the entry at path (of sha256 sum) has a
// valid provenance record and, when it came from a remote cache, a
// signature that the current trusted signers accept.
func checkProvenance(root, path, sum string, b []byte) error {
	rec, err := readTrusted(path+provExt, maxSidecarSize)
	if err != nil {
		return fmt.Errorf("no provenance record: %w", err)
	}
	f := strings.Fields(string(rec))
	if len(f) != 4 || f[0] != provMagic || f[1] != "1" || (f[2] != originHere && f[2] != originFar) {
		return errors.New("malformed provenance record")
	}
	want := provenanceMAC(secretFor(root), f[2], filepath.Base(path), sum)
	if !hmac.Equal([]byte(f[3]), []byte(want)) {
		return errors.New("provenance record not made by this user's converter")
	}
	if f[2] == originFar {
		sig, err := readTrusted(path+sigExt, maxSigSize)
		if err != nil {
			return fmt.Errorf("remote entry without its signature: %w", err)
		}
		if why := verifyRemote(b, sig); why != "" {
			return fmt.Errorf("remote entry no longer trusted: %s", why)
		}
	}
	return nil
}
