package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 32 S3: a local cache entry is used only with a provenance record
// this user's converter made. A folder filled by something else (a CI
// cache restored from a shared store, a copy from another machine) holds
// self-consistent entries — a valid object and a matching sha256 — that
// must be compiled again, not loaded; and an entry fetched from a remote
// cache stops being used when its signer is no longer trusted.
func TestCacheEntryNeedsProvenance(t *testing.T) {
	dir := t.TempDir()
	c := &Cache{Dir: dir, Ext: ".so", Valid: isFakeSO}
	key := testKey("provenance")
	var builds counter
	fetch := func(wantHit bool) {
		t.Helper()
		b, hit, err := c.Fetch(key, builds.build(key))
		if err != nil || !bytes.Equal(b, fakeSO(key)) {
			t.Fatalf("Fetch: %q, %v", b, err)
		}
		if hit != wantHit {
			t.Fatalf("hit = %v, want %v", hit, wantHit)
		}
	}
	fetch(false)
	entry := filepath.Join(dir, key[:2], key+".so")
	rec, err := os.ReadFile(entry + provExt)
	if err != nil || !strings.HasPrefix(string(rec), provMagic+" 1 local ") {
		t.Fatalf("provenance record %q, %v", rec, err)
	}
	fetch(true)

	// a planted entry: a valid object, a matching sidecar
	planted := fakeSO("planted")
	sum := sha256.Sum256(planted)
	plant := func() {
		os.WriteFile(entry, planted, 0o644)
		os.WriteFile(entry+sumExt, []byte(hex.EncodeToString(sum[:])+"  "+key+".so\n"), 0o644)
	}
	otherKey := testKey("another kernel")
	if _, _, err := c.Fetch(otherKey, builds.build(otherKey)); err != nil {
		t.Fatal(err)
	}
	otherEntry := filepath.Join(dir, otherKey[:2], otherKey+".so")
	cases := []struct {
		name string
		do   func()
	}{
		{"no provenance record", func() { plant(); os.Remove(entry + provExt) }},
		{"the old record left beside new bytes", plant},
		{"a record copied from another entry", func() {
			plant()
			b, _ := os.ReadFile(otherEntry + provExt)
			os.WriteFile(entry+provExt, b, 0o644)
		}},
		{"a record made with another secret", func() {
			plant()
			mac := provenanceMAC([]byte("not this user's secret"), originHere, key+".so", hex.EncodeToString(sum[:]))
			os.WriteFile(entry+provExt, []byte(provMagic+" 1 local "+mac+"\n"), 0o644)
		}},
		{"a remote record without a signature", func() {
			os.WriteFile(entry+provExt, provenanceRecord(dir, originFar, key+".so", hex.EncodeToString(sha256Of(fakeSO(key)))), 0o644)
		}},
		{"malformed record", func() { os.WriteFile(entry+provExt, []byte("hello"), 0o644) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := builds.n.Load()
			tc.do()
			fetch(false)
			if builds.n.Load() == before {
				t.Fatal("not rebuilt")
			}
			if b, _ := os.ReadFile(entry); !bytes.Equal(b, fakeSO(key)) {
				t.Fatalf("entry not overwritten: %q", b)
			}
			fetch(true)
		})
	}
}

func sha256Of(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// An object fetched from a trusted remote is kept with its signature and
// checked again on every local use: when the user stops trusting its
// signer, the local copy is compiled again.
func TestRemoteEntryReverifiedLocally(t *testing.T) {
	_, srv := newStore(t)
	trustFleet(t)
	key := testKey("fleet kernel")
	var builds counter
	c1, _, _ := remoteCache(t, srv.URL)
	if _, _, err := c1.Fetch(key, builds.build(key)); err != nil { // compiled, uploaded signed
		t.Fatal(err)
	}
	c2, _, local := remoteCache(t, srv.URL)
	if _, hit, err := c2.Fetch(key, builds.build(key)); err != nil || !hit {
		t.Fatalf("remote hit %v, %v", hit, err)
	}
	entry := filepath.Join(local, "sub", key[:2], key+".so")
	if rec, _ := os.ReadFile(entry + provExt); !strings.HasPrefix(string(rec), provMagic+" 1 remote ") {
		t.Fatalf("provenance %q", rec)
	}
	if _, err := os.Stat(entry + sigExt); err != nil {
		t.Fatal("signature not kept locally:", err)
	}
	srv.Close()
	if _, hit, _ := c2.Fetch(key, builds.build(key)); !hit {
		t.Fatal("local copy of a trusted remote object not used")
	}
	SetRemoteTrust(RemoteTrust{})
	before := builds.n.Load()
	if _, hit, err := c2.Fetch(key, builds.build(key)); err != nil || hit || builds.n.Load() == before {
		t.Fatalf("after the signer was withdrawn: hit %v, err %v, builds %d→%d", hit, err, before, builds.n.Load())
	}
	if rec, _ := os.ReadFile(entry + provExt); !strings.HasPrefix(string(rec), provMagic+" 1 local ") {
		t.Fatalf("provenance after the rebuild %q", rec)
	}
	if _, err := os.Stat(entry + sigExt); err == nil {
		t.Fatal("stale signature kept beside a local compile")
	}
}
