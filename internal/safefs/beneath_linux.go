package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

func openBeneath(dir, rel string) (*os.File, error) {
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	how := &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(d, rel, how)
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), filepath.Join(dir, rel)), nil
	case errors.Is(err, unix.EXDEV):
		return nil, errors.New("resolves outside the model's folder")
	case !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM):
		return nil, err
	}
	// No openat2 (Linux < 5.6, or a seccomp filter): one component at a
	// time, never following a link.
	cur := d
	parts := strings.Split(rel, string(filepath.Separator))
	for i, p := range parts {
		flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW
		if i < len(parts)-1 {
			flags |= unix.O_DIRECTORY
		} else {
			flags |= unix.O_NONBLOCK
		}
		fd, err := unix.Openat(cur, p, flags, 0)
		if cur != d {
			unix.Close(cur)
		}
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return nil, errors.New("a symbolic link on the way (not followed without openat2)")
			}
			return nil, err
		}
		cur = fd
	}
	return os.NewFile(uintptr(cur), filepath.Join(dir, rel)), nil
}
