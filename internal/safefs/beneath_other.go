//go:build !linux

package safefs

import (
	"errors"
	"os"
	"path/filepath"
)

// openBeneath without openat2: the resolved path must stay in dir, checked
// again on the open file.
func openBeneath(dir, rel string) (*os.File, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
	if err != nil {
		return nil, err
	}
	if r, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(r) {
		return nil, errors.New("resolves outside the model's folder")
	}
	return os.Open(real)
}
