// Package mindir reads MindSpore MindIR models into the converter's IR and
// writes the converter's offline models as MindIR in MindSpore's own form.
//
// Reading maps MindSpore primitives (ir_version 0.1.0 bare op_type with
// inline attributes, and 0.1.1 "REF::Prim:uid" into ModelProto.primitives),
// MindSpore Lite's fusion primitives and this project's Custom nodes onto
// the IR conventions of internal/ir/ops.go. Writing lowers every IR op to the
// primitive converter_lite writes for it (lower*.go), fused kernels to
// converter_lite's GraphKernel Custom layout, and follows the loader's rules
// (mindspore/core/load_mindir/load_model.cc), which package
// internal/mindir/check implements as a validator (it decodes through
// export_check.go). The primitive schema (prims_gen.go) is generated from
// MindSpore's sources by schemagen. Parameter weights alias the input buffer
// (an mmap for Open), so a model is never held twice in memory.
package mindir

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go env GOPATH)/bin/protoc-gen-go --go_out=mindirpb --go_opt=paths=source_relative --go_opt=Mmind_ir.proto=gkconv/internal/mindir/mindirpb -I . mind_ir.proto"
//go:generate go run ./schemagen -src ../../../shared/reference/mindspore-src -out prims_gen.go
