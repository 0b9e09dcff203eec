package main

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
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gkconv/internal/kernels/cache"
	"gkconv/internal/trust"
)

// hostileCache is a remote kernel cache server that answers every object
// with the same hostile shared object and a matching sha256 sidecar, and,
// when sig is set, a signature made by a key of its own; it accepts and
// discards uploads.
type hostileCache struct {
	so, sig []byte
	gets    atomic.Int64
}

func (h *hostileCache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		return
	}
	h.gets.Add(1)
	name := path.Base(r.URL.Path)
	switch {
	case strings.HasSuffix(name, ".so"):
		w.Write(h.so)
	case strings.HasSuffix(name, ".so.sha256"):
		sum := sha256.Sum256(h.so)
		io.WriteString(w, hex.EncodeToString(sum[:])+"  "+strings.TrimSuffix(name, ".sha256")+"\n")
	case strings.HasSuffix(name, ".so.sig") && h.sig != nil:
		w.Write(h.sig)
	default:
		http.NotFound(w, r)
	}
}

// Issue 32 S3, end to end: a cache server that answers every key with a
// shared object whose constructor writes a marker file (and a matching
// sidecar, unsigned or signed by a key nobody trusts) makes neither the
// conversion (kernel self-check on or off) nor benchmark load it; the
// object is not embedded in the output and not kept in the local cache,
// so a later run without the server does not run it either.
func TestHostileRemoteCache(t *testing.T) {
	dir := t.TempDir()
	evil := buildEvilSO(t, dir)
	makeFleet(t)
	_, priv, err := ed25519.GenerateKey(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	strangerSig, err := trust.Sign(bytes.NewReader(evil), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), cache.RemoteNamespace)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "marker")
	ran := func() bool { _, err := os.Stat(marker); return err == nil }
	model := filepath.Join(testdataModel(t, "mlp"), "model.onnx")
	cfg := filepath.Join(repoRoot(t), "configs", "akg.cfg")
	// every run has an empty local cache of its own, so it asks the server
	var locals []string
	envFresh := func() []string {
		local := filepath.Join(dir, "local-cache", string(rune('a'+len(locals))))
		locals = append(locals, local)
		return []string{"GKCONV_EVIL_MARKER=" + marker, "GKCONV_KERNEL_CACHE_LOCAL=" + local, "GKCONV_KERNEL_CACHE_TIMEOUT=3s"}
	}

	cases := []struct {
		name  string
		sig   []byte
		extra []string
		want  string // in stderr
	}{
		{"unsigned, no trusted keys", nil, nil, "no trusted signers"},
		{"unsigned, fleet keys trusted", nil, []string{"--trustedKeys=" + fleetSigners}, "rejected (unsigned)"},
		{"signed by a stranger", strangerSig, []string{"--trustedKeys=" + fleetSigners}, "not an allowed signer"},
		{"signed by a stranger, self-check off", strangerSig, []string{"--trustedKeys=" + fleetSigners, "--kernelSelfCheck=off"}, "not an allowed signer"},
	}
	var fused string
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &hostileCache{so: evil, sig: tc.sig}
			srv := httptest.NewServer(h)
			defer srv.Close()
			out := filepath.Join(dir, "out"+string(rune('0'+i)))
			r := runCLI(t, envFresh(), append([]string{"--fmk=ONNX", "--modelFile=" + model, "--outputFile=" + out,
				"--configFile=" + cfg, "--kernelCacheDir=" + srv.URL}, tc.extra...)...)
			if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if ran() {
				t.Fatal("the converter loaded the server's object")
			}
			if tc.extra != nil && h.gets.Load() == 0 {
				t.Fatal("the server was never asked")
			}
			if tc.want != "" && !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
			if b, _ := os.ReadFile(out + ".mindir"); bytes.Contains(b, []byte(evilMark)) {
				t.Fatal("the server's object is embedded in the output")
			}
			fused = out + ".mindir"
		})
	}

	t.Run("benchmark", func(t *testing.T) {
		h := &hostileCache{so: evil, sig: strangerSig}
		srv := httptest.NewServer(h)
		defer srv.Close()
		mlp := testdataModel(t, "mlp")
		for _, extra := range [][]string{nil, {"--trustedKeys=" + fleetSigners}} {
			r := runCLI(t, envFresh(), append([]string{"benchmark", "--modelFile=" + fused, "--inDataFile=" + pbList(mlp, "input"),
				"--benchmarkDataFile=" + pbList(mlp, "output"), "--loopCount=1", "--warmUpLoopCount=0",
				"--kernelCacheDir=" + srv.URL}, extra...)...)
			wantSuccess(t, "benchmark with a hostile remote cache", r)
			if ran() {
				t.Fatalf("benchmark %v loaded the server's object", extra)
			}
			if extra != nil && h.gets.Load() == 0 {
				t.Fatal("the server was never asked")
			}
		}
	})

	t.Run("later run without the server", func(t *testing.T) {
		// Whatever the runs above left in their local caches is used now.
		for _, local := range locals {
			r := runCLI(t, []string{"GKCONV_EVIL_MARKER=" + marker}, "--fmk=ONNX", "--modelFile="+model,
				"--outputFile="+filepath.Join(dir, "later"), "--configFile="+cfg, "--kernelCacheDir="+local)
			if r.code != 0 || ran() {
				t.Fatalf("exit %d, foreign code ran: %v\n%s%s", r.code, ran(), r.stdout, r.stderr)
			}
			filepath.Walk(local, func(p string, info os.FileInfo, err error) error {
				if err == nil && info.Mode().IsRegular() {
					if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(evilMark)) {
						t.Errorf("the server's object is in the local cache: %s", p)
					}
				}
				return nil
			})
		}
	})
}
