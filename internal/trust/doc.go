// Package trust holds what lets a user decide whether to trust a file this
// converter reads or writes:
//
//   - model signatures in OpenSSH's SSHSIG format (PROTOCOL.sshsig), made
//     with an Ed25519 key and checked against an allowed_signers file, so
//     that `ssh-keygen -Y sign` / `ssh-keygen -Y verify` interoperate with
//     Sign and Verify (sshsig.go, keys.go, allowed.go). Only Ed25519 keys
//     (ssh-ed25519) are supported, for signing and for verifying;
//   - crash-safe output files (atomic.go): a file is written unnamed
//     (O_TMPFILE) and linked into place when complete, or, where the
//     filesystem cannot, through a named temporary file of a recognisable
//     pattern that a later run removes when its writer is gone.
//
// It imports only the standard library.
package trust
