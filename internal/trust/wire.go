package trust

import (
	"encoding/binary"
	"errors"
)

// The SSH wire encoding (RFC 4251 section 5): uint32 big-endian, string =
// uint32 length + bytes.

var errShort = errors.New("truncated")

// reader reads SSH wire fields from a byte slice; every read is bounded by
// what is left.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uint32() uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.err = errShort
		r.b = nil
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

// string returns the next string field (aliasing the input).
func (r *reader) string() []byte {
	n := r.uint32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)) {
		r.err = errShort
		r.b = nil
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

// bytes returns the next n raw bytes.
func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errShort
		r.b = nil
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func appendUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

func appendString(b []byte, s []byte) []byte {
	b = appendUint32(b, uint32(len(s)))
	return append(b, s...)
}
