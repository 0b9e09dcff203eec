package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "gkconv/internal/mindir/mindirpb"
)

func TestCheckCommandCorpus(t *testing.T) {
	root := filepath.Join(sharedDir(t), "corpus", "mindir")
	files, _ := filepath.Glob(filepath.Join(root, "mindspore-tests", "*.mindir"))
	files = append([]string{filepath.Join(root, "mnist.mindir")}, files...)
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "encrpty_key") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := runCLI(t, nil, "check", "--modelFile="+f)
			if r.code != 0 || lastLine(r.stdout) != "CHECK RESULT SUCCESS:0" {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, ": 0 violation(s)") || strings.Contains(r.stdout, "load_model.cc:") {
				t.Errorf("stdout: %s", r.stdout)
			}
		})
	}
}

// expectCheckFailure: exit status 1, FAILED last, an ERROR line naming the
// file and containing want.
func expectCheckFailure(t *testing.T, path, want string) {
	t.Helper()
	r := runCLI(t, nil, "check", "--modelFile="+path)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if lastLine(r.stdout) != "CHECK RESULT FAILED:-1" || strings.Contains(r.stdout, "SUCCESS") {
		t.Errorf("stdout: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "ERROR: ") || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q: want an ERROR line naming %s and %q", r.stderr, path, want)
	}
}

func TestCheckCommandUnreadable(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.mindir")
	if err := os.WriteFile(garbage, []byte("\xff\xff\xff\xff not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	expectCheckFailure(t, garbage, "not a MindIR protobuf")
	empty := filepath.Join(dir, "empty.mindir")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	expectCheckFailure(t, empty, "empty file")
	expectCheckFailure(t, filepath.Join(dir, "missing.mindir"), "no such file")
	expectCheckFailure(t, dir, "not a regular file")
}

func TestCheckCommandEncrypted(t *testing.T) {
	f := filepath.Join(sharedDir(t), "corpus", "mindir", "mindspore-tests", "add_encrpty_key_0123456789ABCDEF.mindir")
	if _, err := os.Stat(f); err != nil {
		t.Skip(err)
	}
	expectCheckFailure(t, f, "encrypted MindIR")
}

func TestCheckCommandViolations(t *testing.T) {
	f32 := proto.Int32(int32(pb.TensorProto_FLOAT))
	m := &pb.ModelProto{
		IrVersion: proto.String("0.1.1"), ProducerName: proto.String("MindSpore"), ModelVersion: proto.String("2.5.0"),
		Primitives: []*pb.PrimitiveProto{{Name: proto.String("ReLU:1"), OpType: proto.String("ReLU")}},
		Graph: &pb.GraphProto{
			Name:      proto.String("g"),
			Input:     []*pb.ValueInfoProto{{Name: proto.String("g:x"), Tensor: []*pb.TensorProto{{DataType: f32, Dims: []int64{2}}}}},
			Parameter: []*pb.TensorProto{{Name: proto.String("g:w"), DataType: f32, Dims: []int64{2}, RawData: make([]byte, 7)}},
			Node: []*pb.NodeProto{{Name: proto.String("g:r:1"), Output: []string{"g:r:1"}, OpType: proto.String("REF::ReLU:1"),
				Input: []string{"g:nope"}}},
			Output: []*pb.ValueInfoProto{{Name: proto.String("g:r:1")}},
		},
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bad.mindir")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "check", "--modelFile="+p)
	if r.code != 1 || lastLine(r.stdout) != "CHECK RESULT FAILED:-1" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"g/g:w: -: raw_data length must be product(dims) * element size (memcpy_s into the tensor): want 8 bytes",
		"got 7 bytes (load_model.cc:633 GenerateTensorPtrFromTensorProto)",
		"g/g:r:1: input[0]: input is not defined before use",
		": 2 violation(s)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stderr, "ERROR") {
		t.Errorf("violations are not an unreadable file: stderr %s", r.stderr)
	}
}
