package onnx

import (
	"encoding/binary"
	"fmt"
	"gkconv/internal/safefs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"gkconv/internal/ir"
	"gkconv/internal/onnx/onnxpb"
)

// maxElements bounds a tensor's element count so that dims products cannot
// overflow and a corrupt header cannot make us allocate absurd buffers.
const maxElements = 1 << 50

// dtypeName names an ONNX element type for messages.
func dtypeName(dt int32) string {
	if s, ok := onnxpb.TensorProto_DataType_name[dt]; ok {
		return s
	}
	return fmt.Sprintf("data type %d", dt)
}

// irDType maps an ONNX element type; ir numbering is ONNX's up to BFLOAT16.
func irDType(dt int32) (ir.DType, error) {
	if dt >= int32(ir.Float32) && dt <= int32(ir.BFloat16) {
		return ir.DType(dt), nil
	}
	if dt == 0 {
		return 0, fmt.Errorf("undefined element type")
	}
	return 0, fmt.Errorf("element type %s is not supported", dtypeName(dt))
}

// numElements checks dims and returns their product.
func numElements(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dim in %v", dims)
		}
		if d > 0 && n > maxElements/d {
			return 0, fmt.Errorf("dims %v have too many elements", dims)
		}
		n *= d
	}
	return n, nil
}

// tensor converts a TensorProto. raw_data and external data alias the
// mapped files; typed data fields become owned little-endian buffers.
func (l *loader) tensor(rt *rawTensor) (*ir.Tensor, error) {
	pb := rt.pb
	dt, err := irDType(pb.GetDataType())
	if err != nil {
		return nil, err
	}
	n, err := numElements(pb.GetDims())
	if err != nil {
		return nil, err
	}
	t := &ir.Tensor{DType: dt, Shape: append([]int64{}, pb.GetDims()...)}
	want := n * int64(dt.Size())
	if pb.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		if dt == ir.String {
			return nil, fmt.Errorf("external data for a string tensor")
		}
		if t.Data, err = l.external(pb, want); err != nil {
			return nil, err
		}
		return t, nil
	}
	if rt.hasRaw {
		if dt == ir.String {
			return nil, fmt.Errorf("raw_data for a string tensor")
		}
		if int64(len(rt.raw)) != want {
			return nil, fmt.Errorf("raw_data has %d bytes, want %d for %s%v", len(rt.raw), want, dt, t.Shape)
		}
		t.Data = rt.raw
		return t, nil
	}
	count := func(field string, got, per int) error {
		if int64(got) != n*int64(per) {
			return fmt.Errorf("%s has %d values, want %d for %s%v", field, got, n*int64(per), dt, t.Shape)
		}
		return nil
	}
	le := binary.LittleEndian
	switch dt {
	case ir.Float32, ir.Complex64:
		per := 1
		if dt == ir.Complex64 {
			per = 2
		}
		src := pb.GetFloatData()
		if err := count("float_data", len(src), per); err != nil {
			return nil, err
		}
		t.Data = make([]byte, 4*len(src))
		for i, v := range src {
			le.PutUint32(t.Data[4*i:], math.Float32bits(v))
		}
	case ir.Float64, ir.Complex128:
		per := 1
		if dt == ir.Complex128 {
			per = 2
		}
		src := pb.GetDoubleData()
		if err := count("double_data", len(src), per); err != nil {
			return nil, err
		}
		t.Data = make([]byte, 8*len(src))
		for i, v := range src {
			le.PutUint64(t.Data[8*i:], math.Float64bits(v))
		}
	case ir.Int32:
		src := pb.GetInt32Data()
		if err := count("int32_data", len(src), 1); err != nil {
			return nil, err
		}
		t.Data = make([]byte, 4*len(src))
		for i, v := range src {
			le.PutUint32(t.Data[4*i:], uint32(v))
		}
	case ir.Int8, ir.Uint8, ir.Bool:
		src := pb.GetInt32Data()
		if err := count("int32_data", len(src), 1); err != nil {
			return nil, err
		}
		t.Data = make([]byte, len(src))
		for i, v := range src {
			t.Data[i] = byte(v)
		}
	case ir.Int16, ir.Uint16, ir.Float16, ir.BFloat16:
		// float16 and bfloat16 elements are stored as their bit patterns.
		src := pb.GetInt32Data()
		if err := count("int32_data", len(src), 1); err != nil {
			return nil, err
		}
		t.Data = make([]byte, 2*len(src))
		for i, v := range src {
			le.PutUint16(t.Data[2*i:], uint16(v))
		}
	case ir.Int64:
		src := pb.GetInt64Data()
		if err := count("int64_data", len(src), 1); err != nil {
			return nil, err
		}
		t.Data = make([]byte, 8*len(src))
		for i, v := range src {
			le.PutUint64(t.Data[8*i:], uint64(v))
		}
	case ir.Uint32, ir.Uint64:
		src := pb.GetUint64Data()
		if err := count("uint64_data", len(src), 1); err != nil {
			return nil, err
		}
		size := dt.Size()
		t.Data = make([]byte, size*len(src))
		for i, v := range src {
			if size == 4 {
				le.PutUint32(t.Data[4*i:], uint32(v))
			} else {
				le.PutUint64(t.Data[8*i:], v)
			}
		}
	case ir.String:
		src := pb.GetStringData()
		if err := count("string_data", len(src), 1); err != nil {
			return nil, err
		}
		t.Strings = make([]string, len(src))
		for i, s := range src {
			t.Strings[i] = string(s)
		}
	default:
		return nil, fmt.Errorf("element type %s is not supported", dtypeName(int32(dt)))
	}
	return t, nil
}

// external resolves data_location=EXTERNAL: the side file (relative to the
// model's folder, never outside it) is mapped once and sliced.
func (l *loader) external(pb *onnxpb.TensorProto, want int64) ([]byte, error) {
	var location string
	offset, length := int64(0), int64(-1)
	for _, kv := range pb.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			location = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || offset < 0 || length < -1 {
			return nil, fmt.Errorf("external data: bad %s %q", kv.GetKey(), kv.GetValue())
		}
	}
	if location == "" {
		return nil, fmt.Errorf("external data without a location")
	}
	if l.dir == "" {
		return nil, fmt.Errorf("external data %q: the model was given as bytes without a folder", location)
	}
	if filepath.IsAbs(location) || strings.HasPrefix(location, "/") || strings.HasPrefix(location, `\`) {
		return nil, fmt.Errorf("external data location %q is absolute; it must be relative to the model's folder", location)
	}
	if !filepath.IsLocal(location) {
		return nil, fmt.Errorf("external data location %q escapes the model's folder", location)
	}
	data, err := l.mapSide(location)
	if err != nil {
		return nil, err
	}
	if length < 0 {
		length = want
	}
	if length != want {
		return nil, fmt.Errorf("external data %q: length %d, want %d bytes", location, length, want)
	}
	if offset > int64(len(data)) || length > int64(len(data))-offset {
		// offset + length may overflow: say it without adding them.
		return nil, fmt.Errorf("external data %q: %d bytes at offset %d are past its end (%d bytes)", location, length, offset, len(data))
	}
	return data[offset : offset+length : offset+length], nil
}

// mapSide maps a side file once per model.
func (l *loader) mapSide(location string) ([]byte, error) {
	if d, ok := l.side[location]; ok {
		return d, nil
	}
	// Opened once, beneath the model's folder, and mapped from that
	// descriptor: a link inside the folder must not lead outside it, and a
	// path checked and then opened again could be swapped in between.
	f, st, err := safefs.OpenBeneath(l.dir, location)
	if err != nil {
		return nil, fmt.Errorf("external data location %q: %w", location, err)
	}
	d, err := mmapOpen(f, st)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	if l.side == nil {
		l.side = map[string][]byte{}
	}
	l.side[location] = d
	if len(d) > 0 {
		l.model.maps = append(l.model.maps, d)
		ir.RegisterMapping(d)
	}
	return d, nil
}

// mmapFile maps a whole file read-only; an empty file gives an empty slice.
func mmapFile(path string) ([]byte, error) {
	f, st, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return mmapOpen(f, st)
}

// mmapOpen maps the open regular file f (st its Stat) read-only.
func mmapOpen(f *os.File, st os.FileInfo) ([]byte, error) {
	path := f.Name()
	size := st.Size()
	if size == 0 {
		return []byte{}, nil
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("%s: file too large to map", path)
	}
	d, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	return d, nil
}
