package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gkconv/internal/ir"
	"gkconv/internal/mindir"
)

// The kernel trust policy through the binary: a model's embedded native
// code runs only when the user opts in or a trusted key signed the model.

// fusedMLP converts testdata/mlp with configs/akg.cfg (opt_level 2) into
// dir/<name>.mindir, with extra flags.
func fusedMLP(t *testing.T, dir, name string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	args := append([]string{"--fmk=ONNX", "--modelFile=" + filepath.Join(testdataModel(t, "mlp"), "model.onnx"),
		"--outputFile=" + out, "--configFile=" + filepath.Join(repoRoot(t), "configs", "akg.cfg"), "--kernelCacheDir=" + kernelCache}, extra...)
	r := runCLI(t, nil, args...)
	if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
		t.Fatalf("convert: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	return out + ".mindir"
}

func benchMLP(t *testing.T, env []string, model string, extra ...string) cliResult {
	t.Helper()
	dir := testdataModel(t, "mlp")
	args := append([]string{"benchmark", "--modelFile=" + model, "--inDataFile=" + pbList(dir, "input"),
		"--benchmarkDataFile=" + pbList(dir, "output"), "--loopCount=2", "--warmUpLoopCount=1", "--kernelCacheDir=" + kernelCache}, extra...)
	return runCLI(t, env, args...)
}

func wantSuccess(t *testing.T, what string, r cliResult, contains ...string) {
	t.Helper()
	if r.code != 0 || !strings.HasSuffix(lastLine(r.stdout), "Success.") {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", what, r.code, r.stdout, r.stderr)
	}
	for _, c := range contains {
		if !strings.Contains(r.stdout, c) {
			t.Errorf("%s: stdout lacks %q:\n%s", what, c, r.stdout)
		}
	}
}

// evilMark is a string inside buildEvilSO's object, to find it in outputs.
const evilMark = "foreign code ran"

// buildEvilSO compiles, in dir, a shared object whose ELF constructor
// writes the file $GKCONV_EVIL_MARKER names when it is loaded.
func buildEvilSO(t *testing.T, dir string) []byte {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the hostile shared object")
	}
	src := filepath.Join(dir, "evil.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void evil(void) {
	const char *p = getenv("GKCONV_EVIL_MARKER");
	FILE *f = p ? fopen(p, "w") : NULL;
	if (f) { fputs("`+evilMark+`\\n", f); fclose(f); }
}
`), 0o644)
	so := filepath.Join(dir, "evil.so")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	b, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEmbeddedKernelAttack is the malicious-model reproduction: a fused
// model whose kernel_so is replaced by a shared object with an ELF
// constructor (and whose kernel_so_sha256 is updated to match).
func TestEmbeddedKernelAttack(t *testing.T) {
	dir := t.TempDir()
	model := fusedMLP(t, dir, "good")
	evilSO := buildEvilSO(t, dir)
	m, err := mindir.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	replaced := 0
	for _, n := range m.Graph.Nodes {
		if n.Op == ir.OpGraphKernel {
			n.Attrs[ir.GKKernelSO] = ir.BytesAttr(evilSO)
			n.Attrs[ir.GKKernelSOHash] = ir.StringAttr(sha256Hex(evilSO))
			replaced++
		}
	}
	evil := filepath.Join(dir, "evil.mindir")
	if err := mindir.WriteFile(evil, m.Graph, mindir.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if replaced == 0 {
		t.Fatal("no fused kernel in the model")
	}
	marker := filepath.Join(dir, "marker")
	env := []string{"GKCONV_EVIL_MARKER=" + marker}
	ran := func() bool { _, err := os.Stat(marker); return err == nil }

	// Default: rebuilt from the bodies, correct outputs, no foreign code.
	r := benchMLP(t, env, evil)
	wantSuccess(t, "default benchmark", r, "rebuilt from its body (embedded binary not trusted)")
	if ran() {
		t.Fatal("default benchmark ran the model's embedded code")
	}
	ins := runCLI(t, env, "inspect", "--modelFile="+evil)
	if ins.code != 0 || !strings.Contains(ins.stdout, "benchmark runs it: rebuilt from its body (embedded binary not trusted)") {
		t.Errorf("inspect: exit %d\n%s%s", ins.code, ins.stdout, ins.stderr)
	}
	// Re-conversion reads kernels as data only.
	re := runCLI(t, env, "--fmk=MINDIR", "--modelFile="+evil, "--outputFile="+filepath.Join(dir, "re"),
		"--configFile="+filepath.Join(repoRoot(t), "configs", "akg.cfg"), "--kernelCacheDir="+kernelCache)
	if re.code != 0 || ran() {
		t.Fatalf("--fmk=MINDIR re-conversion: exit %d, foreign code ran: %v\n%s%s", re.code, ran(), re.stdout, re.stderr)
	}
	// No compiler: interpreted, one warning, still no foreign code.
	r = benchMLP(t, append(env, "CC=gkconv-no-such-compiler"), evil)
	wantSuccess(t, "benchmark without a compiler", r, "interpreted (no C compiler")
	if !strings.Contains(r.stderr, "fused kernel runs interpreted (slower): no C compiler") || ran() {
		t.Errorf("without a compiler: foreign code ran %v, stderr:\n%s", ran(), r.stderr)
	}

	// The opt-in runs the embedded code (flag, then environment variable).
	r = benchMLP(t, env, evil, "--trustEmbeddedKernels")
	if !ran() {
		t.Fatalf("--trustEmbeddedKernels did not load the embedded object: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.code != 0 && !strings.Contains(lastLine(r.stdout), "Failed.") {
		t.Errorf("trusted evil model: no Failed line:\n%s", r.stdout)
	}
	os.Remove(marker)
	benchMLP(t, append(env, "GKCONV_TRUST_EMBEDDED_KERNELS=1"), evil)
	if !ran() {
		t.Fatal("GKCONV_TRUST_EMBEDDED_KERNELS=1 did not load the embedded object")
	}
}

// TestSignedModel: a model signed at conversion verifies with ssh-keygen
// and, with --trustedKeys, runs its embedded kernels; a modified byte makes
// benchmark refuse it.
func TestSignedModel(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed: the signature test needs it to make a key and to cross-check")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	allowed := filepath.Join(dir, "allowed_signers")
	os.WriteFile(allowed, []byte(`ci@example.com namespaces="gkconv-model" `+strings.TrimSpace(string(pub))+"\n"), 0o644)

	model := fusedMLP(t, dir, "signed", "--signKey="+key)
	sig := model + ".sig"
	cmd := exec.Command(keygen, "-Y", "verify", "-f", allowed, "-I", "ci@example.com", "-n", "gkconv-model", "-s", sig)
	f, _ := os.Open(model)
	cmd.Stdin = f
	out, err := cmd.CombinedOutput()
	f.Close()
	if err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v\n%s", err, out)
	}

	r := benchMLP(t, nil, model, "--trustedKeys="+allowed)
	wantSuccess(t, "signed benchmark", r, "Model signature: verified, signed by ci@example.com", "loaded (trusted: signed by ci@example.com)")
	r = benchMLP(t, []string{"GKCONV_TRUSTED_KEYS=" + allowed}, model)
	wantSuccess(t, "GKCONV_TRUSTED_KEYS", r, "loaded (trusted: signed by ci@example.com)")
	ins := runCLI(t, nil, "inspect", "--modelFile="+model, "--trustedKeys="+allowed)
	if !strings.Contains(ins.stdout, "benchmark runs it: loaded (trusted: signed by ci@example.com)") {
		t.Errorf("inspect:\n%s%s", ins.stdout, ins.stderr)
	}
	// Signed, but no trusted keys given: rebuilt.
	wantSuccess(t, "signed, no keys", benchMLP(t, nil, model), "rebuilt from its body")

	// An unsigned model with trusted keys: "not signed", rebuilt.
	plain := fusedMLP(t, dir, "plain")
	wantSuccess(t, "unsigned", benchMLP(t, nil, plain, "--trustedKeys="+allowed), "rebuilt from its body (embedded binary not trusted: not signed")

	// One flipped byte: refused.
	b, _ := os.ReadFile(model)
	b[len(b)/2] ^= 0x01
	tampered := filepath.Join(dir, "tampered.mindir")
	os.WriteFile(tampered, b, 0o644)
	s, _ := os.ReadFile(sig)
	os.WriteFile(tampered+".sig", s, 0o644)
	r = benchMLP(t, nil, tampered, "--trustedKeys="+allowed)
	if r.code != 1 || !strings.HasPrefix(lastLine(r.stdout), "Run Benchmark tampered.mindir Failed.") || !strings.Contains(lastLine(r.stdout), "signature") {
		t.Fatalf("tampered: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// Converting again without --signKey removes the now stale signature.
	fusedMLP(t, dir, "signed")
	if _, err := os.Stat(sig); err == nil {
		t.Error("an unsigned re-conversion left the old signature next to the new model")
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Issue 32 (minor): --signKey refuses a private key others can read, as
// ssh-keygen does, before any work.
func TestSignKeyReadableByOthersRefused(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	os.Chmod(key, 0o644)
	model := filepath.Join(dir, "relu.onnx")
	if err := dynamicRelu().WriteFile(model); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := runCLI(t, nil, "--fmk=ONNX", "--modelFile="+model, "--outputFile="+out, "--signKey="+key, "--inputShape=x:2,3")
	if r.code == 0 || !strings.Contains(r.stderr, "readable by others") {
		t.Fatalf("exit %d, stderr %s; want the key refused", r.code, r.stderr)
	}
	if _, err := os.Stat(out + ".mindir"); err == nil {
		t.Errorf("a refused run wrote %s.mindir", out)
	}
}

// Issue 32 S3: the kernel self-check runs each compiled kernel in a child
// process, so a kernel that crashes costs that kernel (un-fused, evicted
// from the cache), not the conversion.
func TestSelfCheckChildContainsCrash(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	rep := filepath.Join(dir, "report.json")
	cfg := writeConfig(t, "[graph_kernel_param]\nopt_level=2\n")
	r := runCLI(t, []string{"GKCONV_TEST_PERTURB_KERNEL=crash:Fused_"},
		"--fmk=ONNX", "--modelFile="+filepath.Join(testdataModel(t, "layernorm_gelu"), "model.onnx"),
		"--outputFile="+filepath.Join(dir, "out"), "--configFile="+cfg, "--kernelCacheDir="+cache, "--reportFile="+rep)
	if r.code != 0 || lastLine(r.stdout) != "CONVERT RESULT SUCCESS:0" {
		t.Fatalf("a crashing kernel took the conversion down: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		KernelBuild struct {
			SelfCheck struct {
				Unfused []string `json:"unfused"`
			} `json:"self_check"`
		} `json:"kernel_build"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if u := got.KernelBuild.SelfCheck.Unfused; len(u) != 1 || !strings.Contains(u[0], "crashed") {
		t.Fatalf("self-check un-fused %q, want the crashed kernel", u)
	}
	if objs, _ := filepath.Glob(filepath.Join(cache, "??", "*.so")); len(objs) != 0 {
		t.Errorf("the crashing object stays in the cache: %v", objs)
	}
	set := filepath.Join(testdataModel(t, "layernorm_gelu"), "test_data_set_0")
	r = runCLI(t, nil, "benchmark", "--modelFile="+filepath.Join(dir, "out.mindir"),
		"--inDataFile="+filepath.Join(set, "input_0.pb"), "--benchmarkDataFile="+filepath.Join(set, "output_0.pb"), "--loopCount=1")
	if r.code != 0 {
		t.Fatalf("the un-fused model does not run: %s %s", r.stdout, r.stderr)
	}
}
