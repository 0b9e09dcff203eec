// Package safefs holds the file-system operations that must not be fooled
// by what is at a path, or leave a partial file behind:
//
//   - crash-safe output files (atomic.go): a file is written unnamed
//     (O_TMPFILE) and linked into place when complete, or, where the
//     filesystem cannot, through a named temporary file of a recognisable
//     pattern that a later run removes when its writer is gone;
//   - the files a user names on the command line (output.go): only a
//     regular file is ever replaced; a pipe or a device is written to as it
//     is;
//   - reading only regular files (regular.go) and only beneath a folder
//     (beneath.go), so a FIFO does not hang a run and a symbolic link does
//     not lead out of a model's folder;
//   - folders only the current user or root can change (safepath.go), for
//     a cache this process takes executable code from;
//   - work folders a later run can tell are orphaned (tempdir.go).
//
// It imports only the standard library and golang.org/x/sys. Who is
// trusted (signatures, keys) is package trust's concern, not this one's.
package safefs
