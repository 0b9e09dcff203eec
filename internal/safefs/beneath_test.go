package safefs

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 32 S1: a link in the model's folder that another process keeps
// swapping between a file inside the folder and one outside never yields
// the outside file's bytes (the loader used to check where the link
// pointed, then open the path again: 82 of 400 conversions embedded the
// outside file). Bounded in time: 2000 opens against a swapper.
func TestOpenBeneathRace(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "inside.bin"), []byte("inside"), 0o644)
	secret := filepath.Join(outside, "secret.bin")
	os.WriteFile(secret, []byte("SECRET"), 0o644)
	link := filepath.Join(dir, "w.bin")
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := filepath.Join(dir, "w.tmp")
		for i := 0; !stop.Load(); i++ {
			target := "inside.bin"
			if i%2 == 1 {
				target = secret
			}
			os.Remove(tmp)
			os.Symlink(target, tmp)
			os.Rename(tmp, link) // atomic swap of the link
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	var inside, refused int
	for i := 0; i < 2000 && time.Now().Before(deadline); i++ {
		f, _, err := OpenBeneath(dir, "w.bin")
		if err != nil {
			refused++
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) == "SECRET" {
			stop.Store(true)
			<-done
			t.Fatalf("open %d read the file outside the folder", i)
		}
		inside++
	}
	stop.Store(true)
	<-done
	t.Logf("%d opens read the file inside, %d were refused", inside, refused)
}

func TestOpenBeneathRefuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.bin"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "in.bin"), []byte("y"), 0o644)
	if f, _, err := OpenBeneath(dir, "sub/in.bin"); err != nil {
		t.Fatalf("a file in a subfolder: %v", err)
	} else {
		f.Close()
	}
	for _, rel := range []string{"../x", "/etc/passwd", "sub/../../x", "sub", "missing"} {
		if f, _, err := OpenBeneath(dir, rel); err == nil {
			f.Close()
			t.Errorf("%q: opened, want an error", rel)
		}
	}
}
