// Package native is the runtime's loader of compiled CPU kernels: it checks
// an embedded GraphKernel shared object against its recorded sha256 and this
// CPU (arch, ISA flags), loads it once per process with dlopen and calls it
// with the AKG CPU ABI: void kernel(void **args), args = [callback*,
// inputs..., outputs...] (data pointers).
package native
