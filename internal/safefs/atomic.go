package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Crash-safe output files. WriteFileAtomic writes a new file where readers
// never see it partial and a crash (kill -9, power loss of the process)
// leaves nothing behind:
//
//   - where the filesystem supports it (Linux O_TMPFILE: ext4, xfs, btrfs,
//     tmpfs, ...), the data goes to an unnamed file in the destination
//     folder, which the kernel frees if the process dies; when complete it
//     is linked in as the destination (linkat through /proc/self/fd), or,
//     when the destination exists (linkat cannot replace), linked under a
//     temporary name and renamed over it;
//   - elsewhere (or with GKCONV_NO_O_TMPFILE=1), through a named temporary
//     file TempPrefix+<16 hex>-<base> in the destination folder, locked
//     (flock) while its writer lives, renamed over the destination.
//
// Named temporary files a dead writer left are removed by the next write
// into the same folder (once per folder and process): only files of this
// pattern, owned by the current user, older than StaleAge and not locked
// by a live writer.

// TempPrefix starts the name of every named temporary file this package
// creates.
const TempPrefix = ".gkconv-tmp-"

// StaleAge is how old a named temporary file must be before a later run
// may remove it as a crash leftover.
const StaleAge = time.Hour

// EnvNoTmpfile, set to a non-empty value, turns the unnamed (O_TMPFILE)
// path off: every write goes through a named temporary file.
const EnvNoTmpfile = "GKCONV_NO_O_TMPFILE"

// forceNamed is the tests' switch for the named path.
var forceNamed bool

func unnamedAllowed() bool { return !forceNamed && os.Getenv(EnvNoTmpfile) == "" }

// WriteFileAtomic replaces path with what write writes, with permissions
// perm (the umask is not applied, as for the files this converter has
// always written). On any error (from write too) path is left as it was and
// no temporary file remains. write receives the *os.File being written.
func WriteFileAtomic(path string, perm fs.FileMode, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	cleanOnce(dir)
	if unnamedAllowed() {
		if f, ok := openUnnamed(dir, perm); ok {
			return writeUnnamed(f, path, write)
		}
	}
	return writeNamed(path, perm, write)
}

// WriteBytesAtomic is WriteFileAtomic of a byte slice.
func WriteBytesAtomic(path string, data []byte, perm fs.FileMode) error {
	return WriteFileAtomic(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func writeUnnamed(f *unnamedFile, path string, write func(io.Writer) error) (err error) {
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := write(f.File); err != nil {
		return err
	}
	return f.linkAs(path)
}

func writeNamed(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	var f *os.File
	var name string
	for try := 0; ; try++ {
		name = tempName(path)
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try == 10 {
			return err
		}
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(name)
		}
	}()
	lockExclusive(f)
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	// Renamed while open (and locked), so a concurrent cleaner never sees an
	// unlocked name of ours that is still being written.
	if err := os.Rename(name, path); err != nil {
		return err
	}
	done = true
	return f.Close()
}

// tempName is a fresh named-temporary path beside path.
func tempName(path string) string {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	base := filepath.Base(path)
	if len(base) > 100 {
		base = base[:100]
	}
	return filepath.Join(filepath.Dir(path), TempPrefix+hex.EncodeToString(r[:])+"-"+base)
}

// IsTempName reports whether a file name has the pattern of this package's
// named temporary files.
func IsTempName(name string) bool {
	rest, ok := stringsCutPrefix(name, TempPrefix)
	if !ok || len(rest) < 16 {
		return false
	}
	for _, c := range []byte(rest[:16]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return len(rest) == 16 || rest[16] == '-'
}

func stringsCutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

var cleaned sync.Map // folder -> struct{}: stale temporary files removed

func cleanOnce(dir string) {
	onceper(&cleaned, dir, func(abs string) { _, _ = RemoveStaleTemps(abs, StaleAge) })
}

// onceper runs f on dir's absolute path the first time this process asks
// for that folder in done.
func onceper(done *sync.Map, dir string, f func(abs string)) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	if _, seen := done.LoadOrStore(abs, struct{}{}); !seen {
		f(abs)
	}
}

// RemoveStaleTemps removes from dir the named temporary files this package
// left there and no writer is using: names of its pattern (IsTempName),
// regular files owned by the current user, last modified more than age ago
// and not locked by a live writer. Other files are never touched. It
// returns the paths removed.
func RemoveStaleTemps(dir string, age time.Duration) (removed []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-age)
	var errs []error
	for _, e := range entries {
		if !IsTempName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := os.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) || !ownedByMe(info) {
			continue
		}
		ok, err := removeIfUnused(p, info)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
		if ok {
			removed = append(removed, p)
		}
	}
	return removed, errors.Join(errs...)
}
