package safefs

import (
	"fmt"
	"os"
	"syscall"
)

// OpenRegular opens path for reading only if it is a regular file. It looks
// before opening (opening a FIFO for reading blocks until a writer comes, so
// a FIFO or device given as a model would hang forever) and again on the
// open file (the path may have been swapped in between).
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
		}
		return nil, nil, err
	}
	return f, st, nil
}

// ReadRegular reads a regular file of at most max bytes (keys, signer
// lists, tensor files).
func ReadRegular(path string, max int64) ([]byte, error) {
	f, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, st.Size(), max)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
