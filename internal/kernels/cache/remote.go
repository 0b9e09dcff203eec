package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The remote kernel cache: the cache folder may be an http:// or https://
// URL, shared by a fleet of converters. Objects are stored as on disk, one
// URL per object, <base>/<Sub>/<key[:2]>/<key><Ext> and its sha256 sidecar
// <...><Ext>.sha256, read with GET (404: a miss) and written with PUT (the
// plain HTTP protocol of ccache's http remote storage; a WebDAV server such
// as nginx with `dav_methods PUT; create_full_put_path on;` serves it). A
// local cache folder is always in front (RemoteLocalEnv, else the default
// folder): a remote hit is stored there, and a local compile is PUT to the
// remote, best effort.
//
// The remote never fails a conversion: a missing or corrupt entry is
// compiled locally; a server that does not answer in time or answers with
// an error is logged once as a warning and not asked again for the rest of
// the process (a dead server costs one timeout, not one per kernel).

// Environment variables of the remote kernel cache.
const (
	// RemoteLocalEnv is the local cache folder in front of a remote cache;
	// default os.UserCacheDir()/gkconv/kernels.
	RemoteLocalEnv = "GKCONV_KERNEL_CACHE_LOCAL"
	// RemoteTimeoutEnv is the time limit of one remote request (a Go
	// duration such as 5s; default defaultRemoteTimeout). Connecting has
	// at most min(1s, this).
	RemoteTimeoutEnv = "GKCONV_KERNEL_CACHE_TIMEOUT"
)

const (
	defaultRemoteTimeout = 5 * time.Second
	remoteConnectTimeout = time.Second
)

// IsRemote reports whether a cache folder setting is an http:// or
// https:// URL.
func IsRemote(dir string) bool {
	d := strings.ToLower(dir)
	return strings.HasPrefix(d, "http://") || strings.HasPrefix(d, "https://")
}

// Counts count what Fetch did with a remote cache; safe for
// concurrent use (Cache.Counts).
type Counts struct {
	RemoteHits   atomic.Int64 // entries fetched from the remote (and verified)
	RemotePuts   atomic.Int64 // entries stored on the remote
	RemoteErrors atomic.Int64 // failed requests and rejected entries

	mu       sync.Mutex
	warnings []string
}

func (c *Counts) warn(w string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.warnings = append(c.warnings, w)
	c.mu.Unlock()
}

func (c *Counts) errored() {
	if c != nil {
		c.RemoteErrors.Add(1)
	}
}

// Warnings are the remote cache's warnings seen by the Fetch calls counted
// here (each was logged once, when it happened).
func (c *Counts) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.warnings...)
}

// AddCounts adds the remote counters and warnings of c to st.
func (st *Stats) AddCounts(c *Counts) {
	st.RemoteHits += int(c.RemoteHits.Load())
	st.RemotePuts += int(c.RemotePuts.Load())
	st.RemoteErrors += int(c.RemoteErrors.Load())
	st.Warnings = append(st.Warnings, c.Warnings()...)
}

// remote is one remote cache base URL; one per URL and process (remotes),
// so that a failure turns it off for every later builder.
type remote struct {
	base   string // without the trailing slash
	shown  string // base with any password redacted, for messages
	client *http.Client

	// probe is held by the one request in flight while it is not yet known
	// whether the server answers (state 0), so that a dead server costs one
	// timeout even with parallel compiles.
	probe  sync.Mutex
	state  atomic.Int32 // remoteUnknown, remoteUp, remoteDown
	noPuts atomic.Bool  // the server refused a PUT: read-only from then on
}

const (
	remoteUnknown int32 = iota
	remoteUp
	remoteDown
)

var remotes sync.Map // base URL -> *remote

// errRemoteDown is returned for requests after the remote failed.
var errRemoteDown = errors.New("remote kernel cache off after an earlier failure")

// remoteFor returns the process's remote for base (an http(s) URL).
func remoteFor(base string) (*remote, error) {
	base = strings.TrimRight(base, "/")
	if v, ok := remotes.Load(base); ok {
		return v.(*remote), nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("kernel cache %q: not an http:// or https:// URL of a folder", redactURL(base))
	}
	timeout := defaultRemoteTimeout
	if s := os.Getenv(RemoteTimeoutEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%s: want a positive duration such as 5s", RemoteTimeoutEnv, s)
		}
		timeout = d
	}
	connect := min(remoteConnectTimeout, timeout)
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       30 * time.Second,
	}
	r := &remote{base: base, shown: u.Redacted(), client: &http.Client{Transport: tr, Timeout: timeout}}
	v, _ := remotes.LoadOrStore(base, r)
	return v.(*remote), nil
}

func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

// objectURL is the URL of an entry (rel is its path under the cache root,
// with slashes).
func (r *remote) objectURL(rel string) string { return r.base + "/" + rel }

// do runs one request with the remote's failure rule: while the server
// has not answered yet, requests go one at a time; a transport error, a
// timeout or a 5xx answer turns the remote off (warning once) and returns
// an error; otherwise the response is returned (its body for the caller
// to close).
func (r *remote) do(method, rel string, body []byte, counts *Counts) (*http.Response, error) {
	switch r.state.Load() {
	case remoteDown:
		return nil, errRemoteDown
	case remoteUnknown:
		r.probe.Lock()
		switch r.state.Load() {
		case remoteDown:
			r.probe.Unlock()
			return nil, errRemoteDown
		case remoteUp: // answered while this one waited
			r.probe.Unlock()
		default:
			defer r.probe.Unlock()
		}
	}
	req, err := http.NewRequestWithContext(context.Background(), method, r.objectURL(rel), bytesReader(body))
	if err != nil {
		r.fail(fmt.Errorf("%s %s: %w", method, rel, err), counts)
		return nil, err
	}
	if body != nil {
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := r.client.Do(req)
	if err == nil && resp.StatusCode >= 500 {
		resp.Body.Close()
		err = fmt.Errorf("%s %s: %s", method, rel, resp.Status)
	} else if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = fmt.Errorf("%s %s: %w", method, rel, ue.Err) // without the URL: it may carry a password
	}
	if err != nil {
		r.fail(err, counts)
		return nil, err
	}
	r.state.CompareAndSwap(remoteUnknown, remoteUp)
	return resp, nil
}

func bytesReader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// fail turns the remote off; the first failure is logged as a warning and
// recorded in counts.
func (r *remote) fail(err error, counts *Counts) {
	counts.errored()
	if r.state.Swap(remoteDown) == remoteDown {
		return
	}
	w := fmt.Sprintf("remote kernel cache %s: %v; not used for the rest of this run (kernels are compiled locally)", r.shown, err)
	slog.Warn(w)
	counts.warn(w)
}

// get fetches the entry rel (and its sidecar) and verifies it: the sidecar
// names the entry, the entry's sha256 equals the sidecar's and valid
// accepts it, and its signature (returned with it) verifies. A miss is
// (nil, nil, nil); a rejected entry is (nil, nil, error) and
// counted, without turning the remote off.
func (r *remote) get(rel, name string, valid func([]byte) bool, counts *Counts) (obj, sig []byte, err error) {
	if currentRemoteTrust().AllowedSigners == nil {
		// Nothing a server sends could be used: do not even ask.
		if !warnedNoTrust.Swap(true) {
			w := fmt.Sprintf("remote kernel cache %s: no trusted signers (--trustedKeys or GKCONV_TRUSTED_KEYS), so no object from it is used: kernels are compiled locally (and uploaded)", r.shown)
			slog.Warn(w)
			counts.warn(w)
		}
		return nil, nil, nil
	}
	side, err := r.getBody(rel+sumExt, maxSidecarSize, counts)
	if side == nil || err != nil {
		return nil, nil, err
	}
	f := strings.Fields(string(side))
	if len(f) != 2 || len(f[0]) != 64 || !isHexKey(f[0]) || f[1] != name {
		return nil, nil, r.reject(rel, "malformed sha256 sidecar", counts)
	}
	b, err := r.getBody(rel, maxCacheEntry, counts)
	if b == nil || err != nil {
		return nil, nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f[0] {
		return nil, nil, r.reject(rel, "sha256 differs from its sidecar", counts)
	}
	if valid != nil && !valid(b) {
		return nil, nil, r.reject(rel, "not a valid artifact", counts)
	}
	sig, err = r.getBody(rel+sigExt, maxSigSize, counts)
	if err != nil {
		return nil, nil, err
	}
	if why := verifyRemote(b, sig); why != "" {
		return nil, nil, r.reject(rel, why, counts)
	}
	return b, sig, nil
}

// reject counts and logs a corrupt remote entry (it is compiled locally,
// and the PUT that follows replaces it).
func (r *remote) reject(rel, why string, counts *Counts) error {
	counts.errored()
	w := fmt.Sprintf("remote kernel cache %s: entry %s rejected (%s); compiled locally instead", r.shown, rel, why)
	slog.Warn(w)
	counts.warn(w)
	return errors.New(w)
}

// getBody GETs rel: nil, nil for a 404 (or 410); at most limit bytes.
func (r *remote) getBody(rel string, limit int64, counts *Counts) ([]byte, error) {
	resp, err := r.do(http.MethodGet, rel, nil, counts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		err := fmt.Errorf("GET %s: %s", rel, resp.Status)
		r.fail(err, counts)
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		err = fmt.Errorf("GET %s: %w", rel, err)
		r.fail(err, counts)
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, r.reject(rel, fmt.Sprintf("over %d bytes", limit), counts)
	}
	return b, nil
}

// put stores the entry rel and then its sidecar (a reader in between sees
// a mismatch and compiles). A server that refuses a PUT (4xx) keeps
// serving GETs: puts stop, with one warning.
func (r *remote) put(rel string, b []byte, counts *Counts) {
	if r.noPuts.Load() {
		return
	}
	sum := sha256.Sum256(b)
	side := []byte(hex.EncodeToString(sum[:]) + "  " + rel[strings.LastIndexByte(rel, '/')+1:] + "\n")
	objects := []struct {
		rel  string
		body []byte
	}{{rel, b}, {rel + sumExt, side}}
	if sig := signUpload(b); sig != nil {
		objects = append(objects, struct {
			rel  string
			body []byte
		}{rel + sigExt, sig})
	}
	for _, p := range objects {
		resp, err := r.do(http.MethodPut, p.rel, p.body, counts)
		if err != nil {
			return
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			counts.errored()
			if !r.noPuts.Swap(true) {
				w := fmt.Sprintf("remote kernel cache %s: PUT %s: %s; compiled kernels are not uploaded for the rest of this run", r.shown, p.rel, resp.Status)
				slog.Warn(w)
				counts.warn(w)
			}
			return
		}
	}
	if counts != nil {
		counts.RemotePuts.Add(1)
	}
}
