package mindir

import (
	"strings"

	pb "gkconv/internal/mindir/mindirpb"
)

// What the validator (internal/mindir/check) needs of the reader, exported
// here in one place so the reader's own files keep their names.

// DecodeModel decodes a MindIR file's bytes as the reader does: tensors
// alias b, and nesting deeper than MaxDepth fails with ErrTooDeep.
func DecodeModel(b []byte) (*pb.ModelProto, error) { return decodeModel(b) }

// ErrTooDeep is the error DecodeModel wraps when messages nest deeper than
// MaxDepth.
var ErrTooDeep = errTooDeep

// MaxDepth is how deeply the reader lets messages and graphs nest.
const MaxDepth = maxDepth

// EncryptionMode returns the MindSpore encryption mode (AES-GCM, ...) whose
// magic number a file starts with, or false for a plain file.
func EncryptionMode(magic uint32) (string, bool) {
	mode, ok := encryptMagic[magic]
	return mode, ok
}

const doSignaturePrefix = "S_Prim_" // kDoSignaturePrimitivePrefix

// PrimBaseName strips MindSpore's DoSignature prefixes from a primitive's
// op type.
func PrimBaseName(s string) string { return primBaseName(s) }

func primBaseName(s string) string {
	if t, ok := strings.CutPrefix(s, doSignaturePrefix); ok {
		return t
	}
	if t, ok := strings.CutPrefix(s, "S-Prim-"); ok {
		return t
	}
	return s
}
