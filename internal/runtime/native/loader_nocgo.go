//go:build !cgo

package native

import "fmt"

// Kernel is one loaded kernel function (unavailable without cgo).
type Kernel struct{ Symbol string }

// Available reports whether this build can load kernels (cgo).
const Available = false

// Load always fails: loading native kernels needs a cgo build.
func Load(so []byte, wantSHA, symbol string) (*Kernel, error) {
	return nil, fmt.Errorf("kernel %s: this converter was built without cgo (CGO_ENABLED=0) and cannot load compiled kernels", symbol)
}

// Launch runs task(id) for every id in [0, n) (see the cgo build).
type Launch func(n int, task func(id int))

// Call is never reached without cgo.
func (k *Kernel) Call(threads int, bufs [][]byte) { panic("native.Kernel.Call without cgo") }

// CallOn is never reached without cgo.
func (k *Kernel) CallOn(threads int, launch Launch, bufs [][]byte) {
	panic("native.Kernel.CallOn without cgo")
}

// OpenMP is never reached without cgo.
func (k *Kernel) OpenMP() bool { return false }
