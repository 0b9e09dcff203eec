//go:build !linux

package safefs

import (
	"errors"
	"io/fs"
	"os"
)

type unnamedFile struct{ *os.File }

func openUnnamed(string, fs.FileMode) (*unnamedFile, bool) { return nil, false }

func (f *unnamedFile) linkAs(string) error { return errors.New("unnamed files are Linux-only") }

// UnnamedTempSupported reports whether WriteFileAtomic writes into dir
// through an unnamed (O_TMPFILE) file: never on this system.
func UnnamedTempSupported(string) bool { return false }

func lockExclusive(*os.File) {}

func ownedByMe(fs.FileInfo) bool { return true }

// removeIfUnused: without a lock to ask, the age check alone decides.
func removeIfUnused(path string, _ fs.FileInfo) (bool, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// processAlive: without a way to ask, every writer counts as alive, so no
// work folder is removed.
func processAlive(int) bool { return true }
