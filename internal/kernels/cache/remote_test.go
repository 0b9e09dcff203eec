package cache

import (
	"bytes"
	"crypto/ed25519"
	crand "crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gkconv/internal/trust"
)

// store is an in-memory stand-in for a WebDAV server: GET and PUT of
// whole objects by path; the nginx test in cmd/converter runs the real one.
type store struct {
	mu       sync.Mutex
	objects  map[string][]byte
	requests atomic.Int64
	delay    time.Duration // before every answer
	readOnly bool          // PUT answers 403
}

func newStore(t *testing.T) (*store, *httptest.Server) {
	s := &store{objects: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			b, ok := s.objects[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		case http.MethodPut:
			if s.readOnly {
				http.Error(w, "read-only", http.StatusForbidden)
				return
			}
			b, _ := io.ReadAll(r.Body)
			s.objects[r.URL.Path] = b
			w.WriteHeader(http.StatusCreated)
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *store) get(path string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objects[path]
}

func (s *store) set(path string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[path] = b
}

// remoteCache is a cache on url with an empty local folder in front.
func remoteCache(t *testing.T, url string) (*Cache, *Counts, string) {
	local := t.TempDir()
	t.Setenv(RemoteLocalEnv, local)
	counts := &Counts{}
	return &Cache{Dir: url, Sub: "sub", Ext: ".so", Valid: isFakeSO, Counts: counts}, counts, local
}

func TestRemoteCacheSharesAcrossLocalCaches(t *testing.T) {
	trustFleet(t)
	s, srv := newStore(t)
	key := testKey("shared kernel")
	var builds counter

	c1, n1, _ := remoteCache(t, srv.URL+"/base/")
	if _, hit, err := c1.Fetch(key, builds.build(key)); err != nil || hit {
		t.Fatalf("first Fetch: hit %v, err %v", hit, err)
	}
	obj := "/base/sub/" + key[:2] + "/" + key + ".so"
	if !bytes.Equal(s.get(obj), fakeSO(key)) || !strings.HasPrefix(string(s.get(obj+".sha256")), testKey(string(fakeSO(key)))) {
		t.Fatalf("not uploaded: %q, %q", s.get(obj), s.get(obj+".sha256"))
	}
	if n1.RemotePuts.Load() != 1 || n1.RemoteHits.Load() != 0 || n1.RemoteErrors.Load() != 0 {
		t.Fatalf("first counts: puts %d hits %d errors %d", n1.RemotePuts.Load(), n1.RemoteHits.Load(), n1.RemoteErrors.Load())
	}

	// A second machine: empty local cache, same remote.
	c2, n2, local2 := remoteCache(t, srv.URL+"/base")
	b, hit, err := c2.Fetch(key, builds.build(key))
	if err != nil || !hit || !bytes.Equal(b, fakeSO(key)) || builds.n.Load() != 1 {
		t.Fatalf("second Fetch: hit %v, err %v, builds %d", hit, err, builds.n.Load())
	}
	if n2.RemoteHits.Load() != 1 || n2.RemotePuts.Load() != 0 {
		t.Fatalf("second counts: hits %d puts %d", n2.RemoteHits.Load(), n2.RemotePuts.Load())
	}
	// ... which now has the entry locally: no request for the next Fetch.
	if _, err := os.Stat(filepath.Join(local2, "sub", key[:2], key+".so.sha256")); err != nil {
		t.Fatalf("remote hit not stored locally: %v", err)
	}
	before := s.requests.Load()
	if _, hit, err := c2.Fetch(key, builds.build(key)); err != nil || !hit || s.requests.Load() != before {
		t.Fatalf("third Fetch: hit %v, err %v, %d requests", hit, err, s.requests.Load()-before)
	}
}

func TestRemoteCacheRejectsCorruptEntries(t *testing.T) {
	trustFleet(t)
	s, srv := newStore(t)
	key := testKey("corrupt kernel")
	obj := "/" + key[:2] + "/" + key + ".so"
	good := fakeSO(key)
	goodSum := testKey(string(good)) + "  " + key + ".so\n"
	for _, tc := range []struct {
		name      string
		obj, side string
	}{
		{"bad bytes", string(good[:len(good)-1]) + "X", goodSum},
		{"wrong sidecar", string(good), testKey("other") + "  " + key + ".so\n"},
		{"sidecar of another entry", string(good), testKey(string(good)) + "  other.so\n"},
		{"not an artifact", "#!/bin/sh\n", testKey("#!/bin/sh\n") + "  " + key + ".so\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.set(obj, []byte(tc.obj))
			s.set(obj+".sha256", []byte(tc.side))
			c, n, _ := remoteCache(t, srv.URL)
			c.Sub = ""
			var builds counter
			b, hit, err := c.Fetch(key, builds.build(key))
			if err != nil || hit || builds.n.Load() != 1 || !bytes.Equal(b, good) {
				t.Fatalf("hit %v, err %v, builds %d, %q", hit, err, builds.n.Load(), b)
			}
			if n.RemoteErrors.Load() != 1 || n.RemoteHits.Load() != 0 || len(n.Warnings()) != 1 || !strings.Contains(n.Warnings()[0], "rejected") {
				t.Fatalf("errors %d hits %d warnings %q", n.RemoteErrors.Load(), n.RemoteHits.Load(), n.Warnings())
			}
			// The remote stays on, and the local compile replaced the entry.
			if n.RemotePuts.Load() != 1 || !bytes.Equal(s.get(obj), good) || string(s.get(obj+".sha256")) != goodSum {
				t.Fatalf("puts %d, remote entry %q %q", n.RemotePuts.Load(), s.get(obj), s.get(obj+".sha256"))
			}
		})
	}
}

func TestRemoteCacheSlowServerCostsOneTimeout(t *testing.T) {
	trustFleet(t)
	s, srv := newStore(t)
	s.delay = 2 * time.Second
	t.Setenv(RemoteTimeoutEnv, "200ms")
	c, n, _ := remoteCache(t, srv.URL)
	var builds counter
	keys := make([]string, 6)
	for i := range keys {
		keys[i] = testKey("slow " + string(rune('a'+i)))
	}
	start := time.Now()
	var st Stats
	if _, err := CompileAll(len(keys), 4, &st, func(i int) ([]byte, bool, error) {
		return c.Fetch(keys[i], builds.build(keys[i]))
	}); err != nil {
		t.Fatal(err)
	}
	st.AddCounts(n)
	if elapsed := time.Since(start); elapsed > 1500*time.Millisecond {
		t.Errorf("took %v: more than one timeout", elapsed)
	}
	if got := s.requests.Load(); got != 1 {
		t.Errorf("%d requests reached the slow server, want 1", got)
	}
	if st.Compiled != len(keys) || st.RemoteErrors != 1 || st.RemotePuts != 0 || len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "not used for the rest of this run") {
		t.Errorf("stats %+v", st)
	}
}

func TestRemoteCacheDeadServer(t *testing.T) {
	trustFleet(t)
	_, srv := newStore(t)
	url := srv.URL
	srv.Close() // nothing listens there now
	c, n, local := remoteCache(t, url)
	var builds counter
	for _, k := range []string{testKey("dead 1"), testKey("dead 2")} {
		if _, hit, err := c.Fetch(k, builds.build(k)); err != nil || hit {
			t.Fatalf("hit %v, err %v", hit, err)
		}
		if _, err := os.Stat(filepath.Join(local, "sub", k[:2], k+".so")); err != nil {
			t.Fatalf("not cached locally: %v", err)
		}
	}
	if builds.n.Load() != 2 || n.RemoteErrors.Load() != 1 || len(n.Warnings()) != 1 {
		t.Fatalf("builds %d errors %d warnings %q", builds.n.Load(), n.RemoteErrors.Load(), n.Warnings())
	}
}

func TestRemoteCacheReadOnlyServer(t *testing.T) {
	trustFleet(t)
	s, srv := newStore(t)
	s.readOnly = true
	c, n, _ := remoteCache(t, srv.URL)
	var builds counter
	k1, k2 := testKey("ro 1"), testKey("ro 2")
	for _, k := range []string{k1, k2} {
		if _, _, err := c.Fetch(k, builds.build(k)); err != nil {
			t.Fatal(err)
		}
	}
	// GETs of both entries (sidecars: misses) and one refused PUT.
	if got := s.requests.Load(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
	if n.RemotePuts.Load() != 0 || n.RemoteErrors.Load() != 1 || len(n.Warnings()) != 1 || !strings.Contains(n.Warnings()[0], "403") {
		t.Errorf("puts %d errors %d warnings %q", n.RemotePuts.Load(), n.RemoteErrors.Load(), n.Warnings())
	}
}

func TestRemoteCacheSetting(t *testing.T) {
	local := t.TempDir()
	t.Setenv(RemoteLocalEnv, local)
	t.Setenv("GKCONV_KERNEL_CACHE", "https://cache.example/kernels")
	if !UsesRemote("") || UsesRemote(local) || !UsesRemote("HTTP://x/y") {
		t.Error("UsesRemote")
	}
	for _, dir := range []string{"", "http://cache.example/k"} {
		use, err := ResolveDir(dir)
		if want, _ := filepath.EvalSymlinks(local); err != nil || use != want {
			t.Errorf("ResolveDir(%q) = %s, %v; want the local folder %s", dir, use, err, want)
		}
	}
	t.Setenv(RemoteLocalEnv, "http://other/")
	if _, err := ResolveDir(""); err == nil {
		t.Error("a URL as the local folder was accepted")
	}
	if _, err := remoteFor("http://user:secret@host/k?x=1"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("URL with a query: %v", err)
	}
}

func TestRemoteCacheServerDiesMidRun(t *testing.T) {
	trustFleet(t)
	s, srv := newStore(t)
	c, n, _ := remoteCache(t, srv.URL)
	k1, k2, k3 := testKey("mid 1"), testKey("mid 2"), testKey("mid 3")
	var builds counter
	if _, _, err := c.Fetch(k1, builds.build(k1)); err != nil { // compiled and uploaded
		t.Fatal(err)
	}
	c2, n2, _ := remoteCache(t, srv.URL) // another process's view: empty local cache
	if _, hit, err := c2.Fetch(k1, builds.build(k1)); err != nil || !hit || n2.RemoteHits.Load() != 1 {
		t.Fatalf("remote hit: %v %v", hit, err)
	}
	srv.CloseClientConnections()
	srv.Close()
	before := s.requests.Load()
	for _, k := range []string{k2, k3} {
		if _, hit, err := c2.Fetch(k, builds.build(k)); err != nil || hit {
			t.Fatalf("after the server died: hit %v, err %v", hit, err)
		}
	}
	if builds.n.Load() != 3 || s.requests.Load() != before || n2.RemoteErrors.Load() != 1 || len(n2.Warnings()) != 1 || n.RemotePuts.Load() != 1 {
		t.Fatalf("builds %d, errors %d, warnings %q", builds.n.Load(), n2.RemoteErrors.Load(), n2.Warnings())
	}
}

// trustFleet makes this process sign its uploads with a fresh key and use
// remote objects signed by it (a fleet's --signKey and --trustedKeys); it
// returns the allowed_signers content.
func trustFleet(t *testing.T) []byte {
	t.Helper()
	key := newPKCS8Key(t)
	pub, err := trust.PublicKeyOf(key)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []byte("fleet " + pub + "\n")
	SetRemoteTrust(RemoteTrust{AllowedSigners: allowed, SignKey: key})
	t.Cleanup(func() { SetRemoteTrust(RemoteTrust{}) })
	return allowed
}

// newPKCS8Key is a fresh Ed25519 private key, PEM-encoded PKCS#8.
func newPKCS8Key(t *testing.T) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// Issue 32 S3: a server that answers a key with a self-consistent object
// (a valid artifact and a matching sidecar) cannot make the process use
// it: unsigned, signed by a key the user does not trust, or with no
// trusted keys configured at all, the object is ignored (compiled
// locally, one warning) and never stored in the local cache.
func TestRemoteCacheNeedsTrustedSignature(t *testing.T) {
	st, srv := newStore(t)
	key := testKey("planted kernel")
	planted := fakeSO("evil")
	sum := sha256.Sum256(planted)
	rel := "/" + key[:2] + "/" + key + ".so"
	plant := func(sig []byte) {
		st.mu.Lock()
		st.objects = map[string][]byte{rel: planted, rel + ".sha256": []byte(hex.EncodeToString(sum[:]) + "  " + key + ".so\n")}
		if sig != nil {
			st.objects[rel+".sig"] = sig
		}
		st.mu.Unlock()
	}
	other := newPKCS8Key(t)
	otherSig, err := trust.Sign(bytes.NewReader(planted), other, RemoteNamespace)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func()
		want  string
	}{
		{"no trusted signers", func() { SetRemoteTrust(RemoteTrust{}); plant(nil) }, "no trusted signers"},
		{"unsigned", func() { trustFleet(t); plant(nil) }, "unsigned"},
		{"signed by an untrusted key", func() { trustFleet(t); plant(otherSig) }, "signature does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warnedNoTrust.Store(false)
			c.setup()
			local := t.TempDir()
			counts := &Counts{}
			cache := &Cache{Dir: srv.URL, Ext: ".so", Valid: isFakeSO, Counts: counts}
			t.Setenv(RemoteLocalEnv, local)
			var builds counter
			b, hit, err := cache.Fetch(key, builds.build(key))
			if err != nil || hit || bytes.Equal(b, planted) || builds.n.Load() != 1 {
				t.Fatalf("the served object was used: hit %v, err %v, builds %d", hit, err, builds.n.Load())
			}
			if w := strings.Join(counts.Warnings(), "\n"); !strings.Contains(w, c.want) {
				t.Errorf("warnings %q, want one saying %q", w, c.want)
			}
			got, _ := os.ReadFile(filepath.Join(local, key[:2], key+".so"))
			if bytes.Equal(got, planted) {
				t.Errorf("the served object was stored in the local cache")
			}
		})
	}
	SetRemoteTrust(RemoteTrust{})
}
