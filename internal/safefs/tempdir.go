package safefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Temporary work folders (the C compiler's, clang's, the kernel loader's)
// are named <prefix><pid>-<random>, so that a run killed with SIGKILL, which
// runs no deferred RemoveAll, leaves a folder a later run can recognise as
// an orphan: our prefix, our user, a writer process that no longer exists.

// TempDirStaleAge is how old an orphaned work folder must be before a later
// run removes it: longer than any compile, so a folder whose writer lives in
// another PID namespace (and so looks dead from here) is not pulled from
// under it.
const TempDirStaleAge = 10 * time.Minute

// MkdirTemp is os.MkdirTemp with the writer's pid in the name. prefix must
// start with "gkconv-" and end with "-". Before its first folder in base, a
// process removes the orphans other runs of ours left there.
func MkdirTemp(base, prefix string) (string, error) {
	if !strings.HasPrefix(prefix, "gkconv-") || !strings.HasSuffix(prefix, "-") {
		return "", fmt.Errorf("safefs.MkdirTemp: prefix %q must look like gkconv-<what>-", prefix)
	}
	if base == "" {
		base = os.TempDir()
	}
	onceper(&swept, base, func(abs string) { _, _ = RemoveOrphanTempDirs(abs, TempDirStaleAge) })
	return os.MkdirTemp(base, prefix+strconv.Itoa(os.Getpid())+"-")
}

var swept sync.Map // folder -> struct{}

// tempDirPid is the writer pid in a name MkdirTemp made, or 0.
func tempDirPid(name string) int {
	rest, ok := strings.CutPrefix(name, "gkconv-")
	if !ok {
		return 0
	}
	// <what>-<pid>-<random>: what is letters only.
	what, rest, ok := strings.Cut(rest, "-")
	if !ok || what == "" || strings.Trim(what, "abcdefghijklmnopqrstuvwxyz") != "" {
		return 0
	}
	pidText, random, ok := strings.Cut(rest, "-")
	if !ok || random == "" || strings.Trim(random, "0123456789") != "" {
		return 0
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// RemoveOrphanTempDirs removes from base the work folders MkdirTemp made
// whose writer process is gone: names of its pattern, folders (not links)
// owned by the current user, modified more than age ago, whose pid names no
// live process. Nothing else is touched. It returns the folders removed.
func RemoveOrphanTempDirs(base string, age time.Duration) (removed []string, err error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-age)
	var errs []error
	for _, e := range entries {
		pid := tempDirPid(e.Name())
		if pid == 0 || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		p := filepath.Join(base, e.Name())
		info, err := os.Lstat(p)
		if err != nil || !info.IsDir() || !info.ModTime().Before(cutoff) || !ownedByMe(info) || processAlive(pid) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
