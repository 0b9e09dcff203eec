// Package cache is the content-addressed kernel cache the builders compile
// through (CPU shared objects, CUDA PTX), so a warm cache runs no compiler:
//
//   - the local cache and its worker pool (cache.go): entries keyed by the
//     sha256 of everything that determines them, checked against a sha256
//     sidecar and kept in folders only this user can change;
//   - provenance records (provenance.go): an entry is used only when an
//     HMAC under this user's secret says this user's converter stored it;
//   - the remote cache (remote.go): an http(s) URL with a local folder in
//     front, best effort, never failing a conversion;
//   - what a remote object must carry to be run (remote_trust.go): an SSH
//     signature by a key the user trusts.
//
// It knows nothing of kernels' contents: the builders pass the key, the
// extension and a validity check.
package cache
