package main

import (
	"crypto/ed25519"
	crand "crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gkconv/internal/trust"
)

// The remote kernel cache (--kernelCacheDir=http://...) against a real
// WebDAV server: nginx with PUT, started here on 127.0.0.1 with a private
// configuration (`bash scripts/deps.sh nginx` installs it; .ci/run does).

// nginxServer is an nginx serving root over http://127.0.0.1:port.
type nginxServer struct {
	cmd  *exec.Cmd
	root string
	url  string
}

func findNginx(t *testing.T) string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	t.Skip("nginx not found (not on PATH nor in /usr/sbin): the remote kernel cache test needs it; `bash scripts/deps.sh nginx` installs it")
	return ""
}

// startNginx runs nginx in the foreground as one process (master_process
// off, so killing it stops the server), with every path in a temp folder.
func startNginx(t *testing.T) *nginxServer {
	bin := findNginx(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	userLine := ""
	if os.Geteuid() == 0 { // else nginx would switch to nobody, who cannot write dir
		if u, err := user.Current(); err == nil {
			userLine = "user " + u.Username + ";"
		}
	}
	var lastErr string
	for attempt := 0; attempt < 5; attempt++ {
		port := freePort(t)
		conf := filepath.Join(dir, "nginx.conf")
		body := fmt.Sprintf(`%[1]s
worker_processes 1;
master_process off;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 64; }
http {
	access_log %[2]s/access.log;
	client_body_temp_path %[2]s/client_body;
	proxy_temp_path %[2]s/proxy;
	fastcgi_temp_path %[2]s/fastcgi;
	uwsgi_temp_path %[2]s/uwsgi;
	scgi_temp_path %[2]s/scgi;
	client_max_body_size 0;
	server {
		listen 127.0.0.1:%[3]d;
		root %[4]s;
		location / {
			dav_methods PUT;
			create_full_put_path on;
			dav_access user:rw group:r all:r;
		}
	}
}
`, userLine, dir, port, root)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			select {
			case <-exited:
				log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
				lastErr = out.String() + string(log)
			default:
				if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
					c.Close()
					s := &nginxServer{cmd: cmd, root: root, url: "http://" + addr + "/kernels"}
					t.Cleanup(func() { s.kill(); <-exited })
					return s
				}
				time.Sleep(50 * time.Millisecond)
				continue
			}
			break
		}
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
			lastErr = "did not listen within 10s"
		}
	}
	t.Fatalf("nginx did not start: %s", lastErr)
	return nil
}

func (s *nginxServer) kill() { s.cmd.Process.Signal(syscall.SIGKILL) }

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// remoteReport is the part of the JSON report these tests read.
type remoteReport struct {
	KernelBuild struct {
		Kernels   int `json:"kernels"`
		Unique    int `json:"unique"`
		Compiled  int `json:"compiled"`
		CacheHits int `json:"cache_hits"`
		Remote    *struct {
			Hits   int `json:"remote_hits"`
			Puts   int `json:"remote_puts"`
			Errors int `json:"remote_errors"`
		} `json:"remote"`
		SelfCheck *struct {
			Ran     int      `json:"ran"`
			Unfused []string `json:"unfused"`
		} `json:"self_check"`
	} `json:"kernel_build"`
	Warnings []string `json:"warnings"`
}

// fleetKey and fleetSigners: the key this test's converters sign their
// uploads with (--signKey) and the allowed_signers file that trusts it
// (--trustedKeys): without them no remote object is used (issue 32 S3).
var fleetKey, fleetSigners string

// makeFleet writes a fresh Ed25519 key (PKCS#8, mode 0600) and an
// allowed_signers file trusting it.
func makeFleet(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	fleetKey = filepath.Join(dir, "fleet_key")
	if err := os.WriteFile(fleetKey, pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err := trust.PublicKeyOf(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	fleetSigners = filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(fleetSigners, []byte("fleet "+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// convertRemote converts model in a new converter process with an empty
// local kernel cache in front of the remote cache url, signing uploads
// and trusting the fleet's key.
func convertRemote(t *testing.T, model, cfg, url string) remoteReport {
	t.Helper()
	tmp := t.TempDir()
	local := filepath.Join(tmp, "local-cache")
	repPath := filepath.Join(tmp, "report.json")
	r := runCLI(t, []string{"GKCONV_KERNEL_CACHE_LOCAL=" + local, "GKCONV_KERNEL_CACHE_TIMEOUT=3s"},
		"--fmk=ONNX", "--modelFile="+filepath.Join(testdataModel(t, model), "model.onnx"),
		"--outputFile="+filepath.Join(tmp, "out"), "--configFile="+cfg,
		"--kernelCacheDir="+url, "--reportFile="+repPath, "--signKey="+fleetKey, "--trustedKeys="+fleetSigners)
	if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
		t.Fatalf("convert %s: exit %d\nstdout: %s\nstderr: %s", model, r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(repPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep remoteReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	kb := rep.KernelBuild
	if kb.Remote == nil || kb.Unique == 0 || kb.Compiled+kb.CacheHits != kb.Unique {
		t.Fatalf("%s: kernel_build %s", model, b)
	}
	t.Logf("%s: unique %d compiled %d cache_hits %d remote %+v", model, kb.Unique, kb.Compiled, kb.CacheHits, *kb.Remote)
	if kb.SelfCheck == nil || len(kb.SelfCheck.Unfused) != 0 {
		t.Fatalf("%s: self-check %s", model, b)
	}
	return rep
}

// remoteObjects lists the shared objects stored on the server.
func remoteObjects(t *testing.T, s *nginxServer) []string {
	objs, err := filepath.Glob(filepath.Join(s.root, "kernels", "??", "*.so"))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestRemoteKernelCacheNginx(t *testing.T) {
	srv := startNginx(t)
	makeFleet(t)
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	models := []string{"mlp", "layernorm_gelu"}

	t.Log("1: empty local cache and remote: compile and upload")
	unique := map[string]int{}
	for _, m := range models {
		rep := convertRemote(t, m, cfg, srv.url)
		kb := rep.KernelBuild
		if kb.Compiled == 0 || kb.Remote.Puts != kb.Compiled || kb.Remote.Hits != 0 || kb.Remote.Errors != 0 {
			t.Fatalf("%s, first run: %+v, remote %+v", m, kb, *kb.Remote)
		}
		unique[m] = kb.Unique
	}
	objs := remoteObjects(t, srv)
	if len(objs) == 0 {
		t.Fatal("nothing uploaded")
	}
	for _, o := range objs {
		if _, err := os.Stat(o + ".sha256"); err != nil {
			t.Fatalf("uploaded without its sidecar: %v", err)
		}
	}

	t.Log("2: another empty local cache, same remote: no compiler run")
	for _, m := range models {
		kb := convertRemote(t, m, cfg, srv.url).KernelBuild
		if kb.Compiled != 0 || kb.Remote.Hits != unique[m] || kb.CacheHits != unique[m] || kb.Remote.Errors != 0 || kb.Remote.Puts != 0 {
			t.Fatalf("%s, remote-warm run: %+v, remote %+v", m, kb, *kb.Remote)
		}
		// The self-check runs the fetched objects against their bodies.
		if kb.SelfCheck.Ran == 0 {
			t.Fatalf("%s: fetched kernels not self-checked: %+v", m, *kb.SelfCheck)
		}
	}

	t.Log("3: corrupt entries on the server are not used")
	if len(objs) < 2 {
		t.Fatalf("want two objects to corrupt, have %d", len(objs))
	}
	badBytes, badSidecar := objs[0], objs[1]
	b, err := os.ReadFile(badBytes)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff // same size, sidecar unchanged
	if err := os.WriteFile(badBytes, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wrong := sha256.Sum256([]byte("another object"))
	if err := os.WriteFile(badSidecar+".sha256", []byte(hex.EncodeToString(wrong[:])+"  "+filepath.Base(badSidecar)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	compiled, rejected := 0, 0
	for _, m := range models {
		rep := convertRemote(t, m, cfg, srv.url)
		kb := rep.KernelBuild
		if kb.Remote.Hits+kb.Compiled != unique[m] || kb.Remote.Errors != kb.Compiled || kb.Remote.Puts != kb.Compiled {
			t.Fatalf("%s, corrupt remote: %+v, remote %+v", m, kb, *kb.Remote)
		}
		compiled += kb.Compiled
		for _, w := range rep.Warnings {
			if strings.Contains(w, "remote kernel cache") && strings.Contains(w, "rejected") {
				rejected++
			}
		}
	}
	if compiled != 2 || rejected != 2 {
		t.Fatalf("corrupt entries: %d compiled, %d rejection warnings; want 2 and 2", compiled, rejected)
	}
	// The uploads after compiling repaired both entries.
	for _, o := range []string{badBytes, badSidecar} {
		b, _ := os.ReadFile(o)
		side, _ := os.ReadFile(o + ".sha256")
		sum := sha256.Sum256(b)
		if !strings.HasPrefix(string(side), hex.EncodeToString(sum[:])+"  ") {
			t.Fatalf("%s not repaired", o)
		}
	}

	t.Log("4: nginx killed: SUCCESS, compiled locally, one warning")
	srv.kill()
	for _, m := range models {
		start := time.Now()
		rep := convertRemote(t, m, cfg, srv.url)
		kb := rep.KernelBuild
		if kb.Compiled != unique[m] || kb.Remote.Hits != 0 || kb.Remote.Puts != 0 || kb.Remote.Errors != 1 {
			t.Fatalf("%s, dead remote: %+v, remote %+v", m, kb, *kb.Remote)
		}
		n := 0
		for _, w := range rep.Warnings {
			if strings.Contains(w, "not used for the rest of this run") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s, dead remote: %d warnings about it, want 1: %q", m, n, rep.Warnings)
		}
		t.Logf("%s with a dead remote: %.1fs", m, time.Since(start).Seconds())
	}
}
