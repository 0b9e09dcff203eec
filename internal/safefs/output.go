package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteOutput writes a file the user named on the command line (a model,
// a report, a signature, a result or tensor file). What is at path decides
// how, so that nothing but a regular file is ever replaced:
//
//   - nothing: a new file, crash-safely (WriteFileAtomic);
//   - a regular file, or a symbolic link to one: the file is replaced
//     crash-safely, at the link's target (the link stays a link);
//   - a FIFO, a socket or a character device, directly or through a link
//     (a pipe, /dev/stdout, /proc/self/fd/N, /dev/null): written to as it
//     is, never replaced (a run as root once replaced the system's
//     /dev/stdout link and /dev/full device node with regular files);
//   - a directory, a block device, a dangling link: an error.
//
// "-" is the process's standard output.
func WriteOutput(path string, perm fs.FileMode, write func(w io.Writer) error) error {
	if path == "-" {
		return write(os.Stdout)
	}
	target, stream, err := OutputTarget(path)
	if err != nil {
		return err
	}
	if !stream {
		return WriteFileAtomic(target, perm, write)
	}
	var f *os.File
	if fd, ok := ownFD(path); ok {
		// One of this process's descriptors (a shell's >(jq .), or a
		// socket, which cannot be opened by path): written through a
		// duplicate, so closing it leaves the descriptor open.
		dup, err := dupFD(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		f = os.NewFile(uintptr(dup), path)
	} else if f, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ownFD recognises the names of this process's own descriptors:
// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
func ownFD(path string) (int, bool) {
	switch path {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(path, dir); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// WriteOutputBytes is WriteOutput of a byte slice.
func WriteOutputBytes(path string, data []byte, perm fs.FileMode) error {
	return WriteOutput(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// OutputTarget says how WriteOutput would write path: the file to create or
// replace (the link target for a link to a regular file), or stream true
// for a FIFO, socket or character device written as it is. A directory, a
// block device, a dangling link or a missing folder is an error, so a run
// can refuse an output before doing any work.
func OutputTarget(path string) (target string, stream bool, err error) {
	if path == "-" {
		return "", true, nil
	}
	st, err := os.Stat(path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		if lst, lerr := os.Lstat(path); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			return "", false, fmt.Errorf("%s: a symbolic link to nothing (refusing to create its target)", path)
		}
		dir := filepath.Dir(path)
		if dst, derr := os.Stat(dir); derr != nil || !dst.IsDir() {
			return "", false, fmt.Errorf("%s: folder %s does not exist", path, dir)
		}
		return path, false, nil
	default:
		return "", false, err
	}
	m := st.Mode()
	switch {
	case m.IsRegular():
		t, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", false, err
		}
		return t, false, nil
	case m&(fs.ModeNamedPipe|fs.ModeSocket) != 0, m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return path, true, nil
	case m.IsDir():
		return "", false, fmt.Errorf("%s: is a directory", path)
	}
	return "", false, fmt.Errorf("%s: not a regular file, FIFO or character device (%s): refusing to write to it", path, m.Type())
}
