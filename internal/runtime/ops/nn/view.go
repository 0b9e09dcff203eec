package nn

import "unsafe"

// viewAs reinterprets a byte slice as a slice of T without copying.
func viewAs[T any](b []byte) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(b) < sz {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/sz)
}
