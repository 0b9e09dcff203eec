package ir

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// Tensor is a dense little-endian tensor. Data may alias a read-only mmap of
// the model file: never write into a tensor you did not allocate.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
	// Strings holds the elements of a String tensor (Data is then empty).
	Strings []string
	// Seq holds the tensors of a Sequence value (DType Sequence).
	Seq []*Tensor
}

// NumElements of a shape; 1 for a scalar, -1 if any dim is unknown. A
// product past int64 saturates at math.MaxInt64, so a huge shape never
// wraps around to a small count (shape inference refuses such shapes, see
// CheckSize).
func NumElements(shape []int64) int64 {
	n, ok := CheckedNumElements(shape)
	if !ok {
		return math.MaxInt64
	}
	return n
}

// CheckedNumElements is NumElements reporting overflow instead of saturating.
func CheckedNumElements(shape []int64) (int64, bool) {
	n := int64(1)
	unknown := false
	for _, d := range shape {
		if d < 0 {
			unknown = true
			continue
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	if unknown {
		return -1, true
	}
	return n, true
}

// MaxTensorBytes bounds a tensor's byte size (1 TiB): no graph this
// converter handles needs more, and sizes past it are input errors (a
// --inputShape typo), which must fail clearly, not overflow.
const MaxTensorBytes = int64(1) << 40

// CheckSize reports a shape whose element count or byte size (elements of
// dt) overflows or exceeds MaxTensorBytes.
func CheckSize(shape []int64, dt DType) error {
	n, ok := CheckedNumElements(shape)
	if !ok {
		return fmt.Errorf("shape %v has more elements than an int64 can count", shape)
	}
	size := int64(dt.Size())
	if size == 0 {
		size = 1
	}
	if n > 0 && n > MaxTensorBytes/size {
		return fmt.Errorf("shape %v of %s is larger than %d bytes", shape, dt, MaxTensorBytes)
	}
	return nil
}

func (t *Tensor) NumElements() int64 { return NumElements(t.Shape) }

// Clone is a deep copy (its own data, shape and strings).
func (t *Tensor) Clone() *Tensor {
	c := *t
	c.Shape = append([]int64(nil), t.Shape...)
	c.Data = append([]byte(nil), t.Data...)
	c.Strings = append([]string(nil), t.Strings...)
	c.Seq = append([]*Tensor(nil), t.Seq...)
	return &c
}

// NewTensor allocates a zeroed tensor.
func NewTensor(dt DType, shape []int64) *Tensor {
	n := NumElements(shape)
	if n < 0 {
		panic(fmt.Sprintf("ir.NewTensor: unknown dims in %v", shape))
	}
	t := &Tensor{DType: dt, Shape: append([]int64{}, shape...)}
	if dt == String {
		t.Strings = make([]string, n)
	} else {
		t.Data = make([]byte, int(n)*dt.Size())
	}
	return t
}

func (t *Tensor) String() string {
	return fmt.Sprintf("%s%v", t.DType, t.Shape)
}

func view[T any](b []byte) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(b) < sz {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/sz)
}

// Typed views of Data (no copy). Callers must check DType first.
func (t *Tensor) F32() []float32 { return view[float32](t.Data) }
func (t *Tensor) F64() []float64 { return view[float64](t.Data) }
func (t *Tensor) I64() []int64   { return view[int64](t.Data) }
func (t *Tensor) I32() []int32   { return view[int32](t.Data) }
func (t *Tensor) I16() []int16   { return view[int16](t.Data) }
func (t *Tensor) I8() []int8     { return view[int8](t.Data) }
func (t *Tensor) U64() []uint64  { return view[uint64](t.Data) }
func (t *Tensor) U32() []uint32  { return view[uint32](t.Data) }
func (t *Tensor) U16() []uint16  { return view[uint16](t.Data) }
func (t *Tensor) U8() []uint8    { return t.Data }

// Int64s converts an integer tensor (int8..int64, uint8..uint64, bool) to []int64.
// It is meant for small shape-like tensors (axes, shapes, pads).
func (t *Tensor) Int64s() ([]int64, error) {
	n := int(t.NumElements())
	out := make([]int64, n)
	switch t.DType {
	case Int64:
		copy(out, t.I64())
	case Int32:
		for i, v := range t.I32()[:n] {
			out[i] = int64(v)
		}
	case Int16:
		for i, v := range t.I16()[:n] {
			out[i] = int64(v)
		}
	case Int8:
		for i, v := range t.I8()[:n] {
			out[i] = int64(v)
		}
	case Uint8, Bool:
		for i, v := range t.Data[:n] {
			out[i] = int64(v)
		}
	case Uint16:
		for i, v := range t.U16()[:n] {
			out[i] = int64(v)
		}
	case Uint32:
		for i, v := range t.U32()[:n] {
			out[i] = int64(v)
		}
	case Uint64:
		for i, v := range t.U64()[:n] {
			out[i] = int64(v)
		}
	default:
		return nil, fmt.Errorf("expected an integer tensor, got %s", t.DType)
	}
	return out, nil
}

// Float64s converts any numeric tensor to []float64 (small tensors: scalars, clip bounds).
func (t *Tensor) Float64s() ([]float64, error) {
	n := int(t.NumElements())
	out := make([]float64, n)
	switch t.DType {
	case Float32:
		for i, v := range t.F32()[:n] {
			out[i] = float64(v)
		}
	case Float64:
		copy(out, t.F64())
	case Float16:
		for i, v := range t.U16()[:n] {
			out[i] = float64(F16ToF32(v))
		}
	case BFloat16:
		for i, v := range t.U16()[:n] {
			out[i] = float64(BF16ToF32(v))
		}
	default:
		iv, err := t.Int64s()
		if err != nil {
			return nil, fmt.Errorf("expected a numeric tensor, got %s", t.DType)
		}
		if t.DType == Uint64 {
			for i, v := range t.U64()[:n] {
				out[i] = float64(v)
			}
			return out, nil
		}
		for i, v := range iv {
			out[i] = float64(v)
		}
	}
	return out, nil
}

// ScalarInt64 builds an int64 tensor of the given shape from values.
func Int64Tensor(shape []int64, vals ...int64) *Tensor {
	t := NewTensor(Int64, shape)
	copy(t.I64(), vals)
	return t
}

func Float32Tensor(shape []int64, vals ...float32) *Tensor {
	t := NewTensor(Float32, shape)
	copy(t.F32(), vals)
	return t
}

// F16ToF32 converts IEEE half bits to float32 (exact).
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		for mant&0x400 == 0 {
			mant <<= 1
			exp--
		}
		exp++
		mant &= 0x3ff
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// F32ToF16 rounds to nearest even, with overflow to Inf and NaN kept NaN.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := mant >> shift
		rem := mant & ((1 << shift) - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++
	}
	return sign | uint16(r)
}

func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// Summary prints the first few elements, for error messages and inspect.
func (t *Tensor) Summary(max int) string {
	var sb strings.Builder
	sb.WriteString(t.String())
	if t.DType == String {
		return sb.String()
	}
	v, err := t.Float64s()
	if err != nil {
		return sb.String()
	}
	sb.WriteString(" [")
	for i, x := range v {
		if i == max {
			sb.WriteString(" ...")
			break
		}
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%g", x)
	}
	sb.WriteString("]")
	return sb.String()
}

// PutFloat writes v as element i of a float tensor of any float dtype.
func (t *Tensor) PutFloat(i int, v float64) {
	switch t.DType {
	case Float32:
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(float32(v)))
	case Float64:
		binary.LittleEndian.PutUint64(t.Data[8*i:], math.Float64bits(v))
	case Float16:
		binary.LittleEndian.PutUint16(t.Data[2*i:], F32ToF16(float32(v)))
	case BFloat16:
		binary.LittleEndian.PutUint16(t.Data[2*i:], F32ToBF16(float32(v)))
	default:
		panic("PutFloat on " + t.DType.String())
	}
}
