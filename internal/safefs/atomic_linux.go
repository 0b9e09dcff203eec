package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

// oTmpfile is Linux's O_TMPFILE (__O_TMPFILE | O_DIRECTORY; O_DIRECTORY
// differs between architectures).
const oTmpfile = 0x400000 | syscall.O_DIRECTORY

const atSymlinkFollow = 0x400

var atFDCWD = -100 // a variable: uintptr of a negative constant does not compile

type unnamedFile struct {
	*os.File
	fd  int
	dir string
}

// openUnnamed opens an unnamed file in dir (O_TMPFILE) that can later be
// linked in through /proc/self/fd; ok is false where that is not possible
// (filesystem or kernel without O_TMPFILE, no /proc).
func openUnnamed(dir string, perm fs.FileMode) (*unnamedFile, bool) {
	fd, err := syscall.Open(dir, oTmpfile|syscall.O_WRONLY|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, false
	}
	if syscall.Fchmod(fd, uint32(perm.Perm())) != nil {
		syscall.Close(fd)
		return nil, false
	}
	if _, err := os.Stat(procFD(fd)); err != nil {
		syscall.Close(fd)
		return nil, false
	}
	// Locked so that, in the instant it has a temporary name (linkAs), a
	// cleaner sees it in use.
	_ = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	return &unnamedFile{File: os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), fd: fd, dir: dir}, true
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// UnnamedTempSupported reports whether WriteFileAtomic writes into dir
// through an unnamed (O_TMPFILE) file.
func UnnamedTempSupported(dir string) bool {
	if !unnamedAllowed() {
		return false
	}
	f, ok := openUnnamed(dir, 0o600)
	if ok {
		f.Close()
	}
	return ok
}

// linkAs gives the complete file the name path: linkat when path does not
// exist, else linkat to a temporary name and a rename over path.
func (f *unnamedFile) linkAs(path string) error {
	err := linkat(procFD(f.fd), path)
	if err == nil || !errors.Is(err, syscall.EEXIST) {
		return wrapPathErr("link", path, err)
	}
	for try := 0; ; try++ {
		tmp := tempName(path)
		err := linkat(procFD(f.fd), tmp)
		if errors.Is(err, syscall.EEXIST) && try < 10 {
			continue
		}
		if err != nil {
			return wrapPathErr("link", tmp, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
}

func wrapPathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// linkat is linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, AT_SYMLINK_FOLLOW)
// (the syscall package exports no Linkat).
func linkat(oldpath, newpath string) error {
	p1, err := syscall.BytePtrFromString(oldpath)
	if err != nil {
		return err
	}
	p2, err := syscall.BytePtrFromString(newpath)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(p1)),
		uintptr(atFDCWD), uintptr(unsafe.Pointer(p2)), atSymlinkFollow, 0)
	if e != 0 {
		return e
	}
	return nil
}

// lockExclusive takes f's flock (released when the process dies).
func lockExclusive(f *os.File) {
	if sc, err := f.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) { _ = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) })
	}
}

func ownedByMe(info fs.FileInfo) bool {
	uid, ok := FileOwner(info)
	return ok && uid == os.Getuid()
}

// removeIfUnused removes path (described by info) unless a live writer
// holds its lock; ok reports a removal.
func removeIfUnused(path string, info fs.FileInfo) (ok bool, err error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return false, nil
		}
		return false, err
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil // in use (EWOULDBLOCK), or no locks here: leave it
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false, err
	}
	if ist, ok := info.Sys().(*syscall.Stat_t); !ok || ist.Dev != st.Dev || ist.Ino != st.Ino {
		return false, nil // replaced since listed
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// processAlive reports whether pid names a process (EPERM: one of another
// user's, alive all the same).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
