// Package trust holds what lets a user decide whom to trust for a file this
// converter reads or writes:
//
//   - model signatures in OpenSSH's SSHSIG format (PROTOCOL.sshsig), made
//     with an Ed25519 key and checked against an allowed_signers file, so
//     that `ssh-keygen -Y sign` / `ssh-keygen -Y verify` interoperate with
//     Sign and Verify (sshsig.go, keys.go, allowed.go, wire.go). Only
//     Ed25519 keys (ssh-ed25519) are supported, for signing and for
//     verifying;
//   - the per-user secret that vouches for kernels this user's runs built
//     (secret.go), kept in a file only its owner can read.
//
// How files are opened and written safely (crash-safe writes, regular-file
// and beneath-a-folder opening) lives in package safefs, which this package
// uses to check the secret file's owner.
package trust
