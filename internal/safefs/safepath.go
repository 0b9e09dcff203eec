package safefs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Who may change a path: a directory this process takes executable code
// from (the kernel cache) must be changeable by the current user and root
// only, or anyone who can write there could plant code (OpenSSH's
// safe_path, the same rule).

// CheckSafeDir returns nil when only the current user or root can change
// what dir holds: dir (after symlinks) and every folder above it are owned
// by the current user or root and are not writable by group or others,
// unless sticky (like /tmp: others may add files there but not replace
// ours). Otherwise the error says which folder and why.
func CheckSafeDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	for p := real; ; p = filepath.Dir(p) {
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !info.IsDir() {
			return fmt.Errorf("%s is not a folder", p)
		}
		if why := unsafeMode(info, true); why != "" {
			return fmt.Errorf("%s is %s", p, why)
		}
		if parent := filepath.Dir(p); parent == p {
			return nil
		}
	}
}

// CheckSafeFile returns nil when info (from Lstat or Stat of an open file)
// is a regular file owned by the current user or root and not writable by
// group or others.
func CheckSafeFile(info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v)", info.Name(), info.Mode().Type())
	}
	if why := unsafeMode(info, false); why != "" {
		return fmt.Errorf("%s is %s", info.Name(), why)
	}
	return nil
}

// unsafeMode says why info may be changed by someone else, or "".
func unsafeMode(info fs.FileInfo, stickyOK bool) string {
	if uid, ok := FileOwner(info); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Sprintf("owned by another user (uid %d)", uid)
	}
	m := info.Mode()
	if m.Perm()&0o022 != 0 && !(stickyOK && m&fs.ModeSticky != 0) {
		if stickyOK {
			return fmt.Sprintf("writable by group or others without the sticky bit (mode %#o)", m.Perm())
		}
		return fmt.Sprintf("writable by group or others (mode %#o)", m.Perm())
	}
	return ""
}
