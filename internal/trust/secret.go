package trust

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"gkconv/internal/safefs"
)

// secretBytes is the size of a secret made by LoadOrCreateSecret.
const secretBytes = 32

// LoadOrCreateSecret returns the secret kept in the file at path (64 hex
// digits), creating the file (mode 0600, its folder 0700) with a random
// secret when it does not exist. An existing file is used only when it is
// a regular file (not a symlink) owned by the current user and readable or
// writable by nobody else, as ssh treats private keys; anything else is an
// error, never a silent fresh secret (which would quietly invalidate what
// the old one vouched for).
func LoadOrCreateSecret(path string) ([]byte, error) {
	if b, err := readSecret(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	raw := make([]byte, secretBytes)
	if _, err := io.ReadFull(rand.Reader, raw); err != nil {
		return nil, err
	}
	// Written whole under a temporary name, then linked into place: a
	// concurrent run sees no file or the whole secret, never a part, and
	// of two runs creating it at once one link wins and both use it.
	f, err := os.CreateTemp(filepath.Dir(path), ".kernel-cache-key-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	if err := f.Chmod(0o600); werr == nil {
		werr = err
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readSecret(path) // made by a concurrent run
		}
		return nil, err
	}
	return raw, nil
}

func readSecret(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: a symlink, not used as a secret", path)
		}
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if uid, ok := safefs.FileOwner(info); ok && uid != os.Getuid() {
		return nil, fmt.Errorf("%s: owned by uid %d, not by this user", path, uid)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %#o lets others read or change it (chmod 600)", path, info.Mode().Perm())
	}
	b := make([]byte, 2*secretBytes+2)
	n, _ := io.ReadFull(f, b)
	text := string(b[:n])
	if len(text) > 0 && text[len(text)-1] == '\n' {
		text = text[:len(text)-1]
	}
	raw, err := hex.DecodeString(text)
	if err != nil || len(raw) != secretBytes {
		return nil, fmt.Errorf("%s: not a secret of %d hex digits", path, 2*secretBytes)
	}
	return raw, nil
}
