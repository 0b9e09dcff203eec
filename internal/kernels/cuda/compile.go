package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"

	"gkconv/internal/kernels/cache"
	"gkconv/internal/safefs"
)

// clang is a resolved clang binary with its version line.
type clang struct {
	path    string
	version string
}

// FindClang resolves the clang command: cmd, else $GKCONV_CLANG, else the
// first of clang, clang-14 on PATH.
func FindClang(cmd string) (string, error) {
	cands := []string{cmd}
	if cmd == "" {
		cands = []string{os.Getenv("GKCONV_CLANG"), "clang", "clang-14"}
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("clang not found (tried %s): install clang (apt-get install clang) or set GKCONV_CLANG", strings.Join(nonEmpty(cands), ", "))
}

func nonEmpty(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func resolveClang(cmd string) (*clang, error) {
	p, err := FindClang(cmd)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("clang %s does not run: %v: %s", p, err, strings.TrimSpace(string(out)))
	}
	v := strings.TrimSpace(string(out))
	if i := strings.IndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	return &clang{path: p, version: v}, nil
}

// ptxFlags are the clang flags of a PTX compile (the arch is added).
var ptxFlags = []string{"-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "-S", "-O3"}

var clangRuns atomic.Int64 // for tests: compiler processes started

func (c *clang) cacheKey(src, arch string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", src, c.version, arch, strings.Join(ptxFlags, " "))
	return hex.EncodeToString(h.Sum(nil))
}

// ptxCache is the PTX kind of the kernel cache (dir a folder or a remote
// cache's URL); counts receives the remote's work.
func ptxCache(dir string, counts *cache.Counts) *cache.Cache {
	return &cache.Cache{Dir: dir, Sub: "ptx", Ext: ".ptx", Counts: counts,
		Valid: func(b []byte) bool { return bytes.Contains(b, []byte(".entry")) }}
}

// compile returns the PTX of src, from the cache or by running clang.
func (c *clang) compile(src, arch string, objects *cache.Cache, what string) ([]byte, bool, error) {
	return objects.Fetch(c.cacheKey(src, arch), func() ([]byte, error) {
		work, err := safefs.MkdirTemp("", "gkconv-ptx-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
		srcPath := filepath.Join(work, "kernel.cu")
		outPath := filepath.Join(work, "kernel.ptx")
		if err := os.WriteFile(srcPath, []byte(src), 0o600); err != nil {
			return nil, err
		}
		args := append(append([]string{}, ptxFlags...), "--cuda-gpu-arch="+arch, "-o", outPath, srcPath)
		clangRuns.Add(1)
		cmd := exec.Command(c.path, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s: clang %s failed: %v\n%s", what, c.path, err, strings.TrimSpace(out.String()))
		}
		return os.ReadFile(outPath)
	})
}

var (
	reVersion = regexp.MustCompile(`(?m)^\s*\.version\s+(\d+\.\d+)`)
	reTarget  = regexp.MustCompile(`(?m)^\s*\.target\s+(sm_\d+)`)
)

// CheckPTX checks a PTX module structurally: a .version, the .target arch,
// the entry `.entry <entry>(` and exactly nparams parameters.
func CheckPTX(ptx []byte, entry, arch string, nparams int) error {
	s := string(ptx)
	if !reVersion.MatchString(s) {
		return errors.New("PTX has no .version directive")
	}
	m := reTarget.FindStringSubmatch(s)
	if m == nil {
		return errors.New("PTX has no .target directive")
	}
	if m[1] != arch {
		return fmt.Errorf("PTX targets %s, want %s", m[1], arch)
	}
	i := strings.Index(s, ".entry "+entry+"(")
	if i < 0 {
		return fmt.Errorf("PTX has no .entry %s", entry)
	}
	rest := s[i:]
	end := strings.Index(rest, ")")
	if end < 0 {
		return fmt.Errorf("PTX entry %s has an unterminated parameter list", entry)
	}
	if got := strings.Count(rest[:end], ".param "); got != nparams {
		return fmt.Errorf("PTX entry %s has %d parameters, want %d", entry, got, nparams)
	}
	return nil
}

// Assemble runs ptxas on the PTX when it is on PATH; ok is false when it is
// not (nothing was checked).
func Assemble(ptx []byte, arch string) (ok bool, err error) {
	p, err := exec.LookPath("ptxas")
	if err != nil {
		return false, nil
	}
	dir, err := safefs.MkdirTemp("", "gkconv-ptxas-")
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(in, ptx, 0o600); err != nil {
		return true, err
	}
	out, err := exec.Command(p, "-arch="+arch, "-o", filepath.Join(dir, "k.cubin"), in).CombinedOutput()
	if err != nil {
		return true, fmt.Errorf("ptxas: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return true, nil
}
