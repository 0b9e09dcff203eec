package kernels

import (
	"strings"
	"testing"
)

// TestDeviceMathTable: libmUnary's Device column says what DeviceMath
// defines. A row marked Device needs the float function (and the double
// one when the op is cheap enough for device targets to take on float64,
// CheckDeviceBody); a row without it must not have the float function, or
// the flag is stale and the device generators refuse an op they could emit.
func TestDeviceMathTable(t *testing.T) {
	defines := func(fn string) bool {
		return strings.Contains(DeviceMath, "#define "+fn+" ") || strings.Contains(DeviceMath, "#define "+fn+"(")
	}
	for op, f := range libmUnary {
		switch {
		case f.Device && !defines(f.Name+"f"):
			t.Errorf("%s: libmUnary says DeviceMath implements %sf, it does not", op, f.Name)
		case f.Device && f.Cost < 3 && !defines(f.Name):
			t.Errorf("%s: device targets take it on float64 (cost %d), DeviceMath has no %s", op, f.Cost, f.Name)
		case !f.Device && defines(f.Name+"f"):
			t.Errorf("%s: DeviceMath implements %sf; set Device in libmUnary", op, f.Name)
		}
	}
}
