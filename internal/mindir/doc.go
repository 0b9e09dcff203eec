// Package mindir reads MindSpore MindIR models into the converter's IR and
// writes the converter's offline models as MindIR.
//
// Reading maps MindSpore primitives (ir_version 0.1.0 bare op_type with
// inline attributes, and 0.1.1 "REF::Prim:uid" into ModelProto.primitives)
// onto the IR conventions of internal/ir/ops.go. Files whose producer is
// "gkconv" were written by Write and are read back verbatim. Parameter
// weights alias the input buffer (an mmap for Open), so a model is never
// held twice in memory.
package mindir

//go:generate protoc --plugin=protoc-gen-go=/root/go/bin/protoc-gen-go --go_out=mindirpb --go_opt=paths=source_relative --go_opt=Mmind_ir.proto=gkconv/internal/mindir/mindirpb -I . mind_ir.proto
//go:generate go run ./schemagen -src ../../../shared/reference/mindspore-src -out prims_gen.go
