//go:build unix

package safefs

import (
	"io/fs"
	"syscall"
)

// FileOwner returns the uid that owns info's file, and false where the
// system does not say (info not from a Unix stat).
func FileOwner(info fs.FileInfo) (uid int, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
