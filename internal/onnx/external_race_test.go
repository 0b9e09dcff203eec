package onnx

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	ob "gkconv/internal/onnx/onnxbuild"
)

// Issue 32 S1: a model whose external data file is a link that another
// process swaps between a file inside the model's folder and one outside
// never loads the outside file's bytes (the loader checked where the link
// pointed and then opened the path again: 82 of 400 conversions embedded
// the outside bytes). Bounded: 400 loads or 10 s.
func TestExternalDataSwapRace(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	inside := ob.Float32s("", i64(2), []float32{1, 2}).RawData
	secret := ob.Float32s("", i64(2), []float32{666, 666}).RawData
	os.WriteFile(filepath.Join(dir, "inside.bin"), inside, 0o644)
	os.WriteFile(filepath.Join(outside, "secret.bin"), secret, 0o644)
	m := ob.New("g", 13).Input("x", ob.Float, 2).Output("y", ob.Float, 2)
	m.Init(externalTensor("w", "w.bin", 0, 8, 2))
	m.Node("add", "Add", strs("x", "w"), strs("y"))
	path := writeModel(t, dir, m)
	link := filepath.Join(dir, "w.bin")
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := filepath.Join(dir, "w.tmp")
		for i := 0; !stop.Load(); i++ {
			target := "inside.bin"
			if i%2 == 1 {
				target = filepath.Join(outside, "secret.bin")
			}
			os.Remove(tmp)
			os.Symlink(target, tmp)
			os.Rename(tmp, link)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	loaded := 0
	for i := 0; i < 400 && time.Now().Before(deadline); i++ {
		model, err := Open(path, Options{})
		if err != nil {
			continue // refused: the link pointed outside at that moment
		}
		if got := constFloats(t, model.Graph.Consts[0]); got[0] == 666 {
			model.Close()
			t.Fatalf("load %d embedded the bytes of the file outside the folder", i)
		}
		model.Close()
		loaded++
	}
	t.Logf("%d loads read the file inside the folder", loaded)
}
