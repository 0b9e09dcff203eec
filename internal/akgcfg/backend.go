package akgcfg

import (
	"fmt"
	"strings"
)

// Device is a target device kind. The values are bits so that an op table
// entry can name several devices (see OpEntry).
type Device uint8

const (
	CPU Device = 1 << iota
	GPU
	Ascend

	// AllDevices matches every device (MindSpore's kAllTarget).
	AllDevices = CPU | GPU | Ascend
)

func (d Device) String() string {
	switch d {
	case CPU:
		return "CPU"
	case GPU:
		return "GPU"
	case Ascend:
		return "Ascend"
	case AllDevices:
		return "All"
	}
	var parts []string
	for _, x := range []Device{CPU, GPU, Ascend} {
		if d&x != 0 {
			parts = append(parts, x.String())
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("Device(%d)", uint8(d))
	}
	return strings.Join(parts, "|")
}

// ParseDevice reads a converter --device value: "CPU", "GPU" or a CUDA arch
// ("sm_80", "cuda"), or anything containing "Ascend" (Ascend310, Ascend910B...),
// case-insensitively, as converter_lite tests `device.find("Ascend")`.
func ParseDevice(s string) (Device, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	switch {
	case l == "cpu" || l == "":
		return CPU, nil
	case l == "gpu" || strings.HasPrefix(l, "sm_") || strings.HasPrefix(l, "cuda"):
		return GPU, nil
	case strings.Contains(l, "ascend"):
		return Ascend, nil
	}
	return 0, fmt.Errorf("unknown device %q (want CPU, GPU, sm_XX or Ascend[chip])", s)
}

// Backend is the device a model is converted for; Soc is the Ascend chip
// (ascend_context soc_version, e.g. "Ascend910B2"), empty elsewhere.
type Backend struct {
	Device Device
	Soc    string
}

// KnownSocs are the Ascend chips (CANN soc_version) this converter knows;
// the variants (Ascend910B1..B4, Ascend310P3, ...) are accepted by prefix.
var KnownSocs = []string{"Ascend310", "Ascend310B", "Ascend310P", "Ascend910", "Ascend910A", "Ascend910B", "Ascend910_93"}

// CheckSoc returns a warning for a chip name none of KnownSocs starts, with
// the nearest known one, or "".
func CheckSoc(soc string) string {
	for _, k := range KnownSocs {
		if strings.HasPrefix(strings.ToLower(soc), strings.ToLower(k)) {
			return ""
		}
	}
	return fmt.Sprintf("unknown Ascend chip %q%s (known: %s and their variants)", soc, Suggestion(soc, KnownSocs), strings.Join(KnownSocs, ", "))
}

// Is910B reports whether the chip is an Ascend 910B or 910_93, where
// MindSpore turns stitch fusion off by default.
func (b Backend) Is910B() bool {
	if b.Device != Ascend {
		return false
	}
	s := strings.ToLower(b.Soc)
	return strings.HasPrefix(s, "ascend910b") || strings.HasPrefix(s, "ascend910_93")
}

func (b Backend) String() string {
	if b.Soc != "" {
		return b.Device.String() + "(" + b.Soc + ")"
	}
	return b.Device.String()
}
