package kernels

import (
	"fmt"
	"math"
	"strconv"

	"gkconv/internal/ir"
)

// C types of a dtype: storage is what a buffer holds, compute what the
// generated expressions use (half types compute in float, bools in int).
// Every generator (C, CUDA, Ascend C) writes the same C types.

// StorageType is the C type a buffer of dt holds (fixed-width integer names).
func StorageType(dt ir.DType) (string, bool) {
	switch dt {
	case ir.Float32:
		return "float", true
	case ir.Float64:
		return "double", true
	case ir.Float16, ir.BFloat16, ir.Uint16:
		return "uint16_t", true
	case ir.Int8:
		return "int8_t", true
	case ir.Uint8, ir.Bool:
		return "uint8_t", true
	case ir.Int16:
		return "int16_t", true
	case ir.Int32:
		return "int32_t", true
	case ir.Uint32:
		return "uint32_t", true
	case ir.Int64:
		return "int64_t", true
	case ir.Uint64:
		return "uint64_t", true
	}
	return "", false
}

// ComputeType is the C type expressions of dt are computed in.
func ComputeType(dt ir.DType) string {
	switch dt {
	case ir.Float16, ir.BFloat16:
		return "float"
	case ir.Bool:
		return "int"
	}
	s, _ := StorageType(dt)
	return s
}

// LoadConv converts a storage read into the compute type.
func LoadConv(dt ir.DType, e string) string {
	switch dt {
	case ir.Float16:
		return "gk_h2f(" + e + ")"
	case ir.BFloat16:
		return "gk_bf2f(" + e + ")"
	case ir.Bool:
		return "(int)" + e
	}
	return e
}

// StoreConv converts a compute-type expression for a store into dt.
func StoreConv(dt ir.DType, e string) string {
	switch dt {
	case ir.Float16:
		return "gk_f2h(" + e + ")"
	case ir.BFloat16:
		return "gk_f2bf(" + e + ")"
	case ir.Bool:
		return "(uint8_t)((" + e + ") != 0)"
	}
	s, _ := StorageType(dt)
	return "(" + s + ")(" + e + ")"
}

// Literal writes a scalar in the compute type of dt.
func Literal(dt ir.DType, v float64) string {
	switch {
	case dt == ir.Float64:
		switch {
		case math.IsNaN(v):
			return "(__builtin_nan(\"\"))"
		case math.IsInf(v, 1):
			return "(__builtin_inf())"
		case math.IsInf(v, -1):
			return "(-__builtin_inf())"
		}
		return "(" + fmtFloat(v, 64) + ")"
	case dt.IsFloat():
		switch {
		case math.IsNaN(v):
			return "(__builtin_nanf(\"\"))"
		case math.IsInf(v, 1):
			return "(__builtin_inff())"
		case math.IsInf(v, -1):
			return "(-__builtin_inff())"
		}
		return "(" + fmtFloat(float64(float32(v)), 32) + "f)"
	case dt == ir.Bool:
		if v != 0 {
			return "1"
		}
		return "0"
	}
	return fmt.Sprintf("((%s)%s)", ComputeType(dt), strconv.FormatFloat(v, 'f', -1, 64))
}

// fmtFloat writes v as a C floating literal (always with a '.' or exponent).
func fmtFloat(v float64, bits int) string {
	s := strconv.FormatFloat(v, 'g', -1, bits)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'N' {
			return s
		}
	}
	return s + ".0"
}
