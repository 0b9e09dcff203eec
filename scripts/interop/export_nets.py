"""Export real MindSpore networks as .mindir test models, with reference outputs.

Usage (in build/interop-venv):
  python scripts/interop/export_nets.py OUTDIR [name ...] [--small-to DIR]

For every network NAME (all of them when none is named) it writes
  OUTDIR/NAME/model.mindir                      mindspore.export(..., "MINDIR")
  OUTDIR/NAME/test_data_set_0/input_<i>.pb      ONNX TensorProto of each input
  OUTDIR/NAME/test_data_set_0/output_<i>.pb     what MindSpore itself computes
  OUTDIR/NAME/meta.json                         shapes, dtypes, MindSpore version
The files come from MindSpore itself, not from gkconv, so they test what
MindSpore really writes. Weights and inputs are random but seeded: a rerun
with the same MindSpore version gives the same files' numbers.
--small-to DIR copies each network folder whose model.mindir is under 2 MB to
DIR/NAME (replacing it), for the ones small enough to commit.
Prints "export_nets: NAME ok (<size> bytes)" or "export_nets: NAME FAILED: ..."
per network; exit status 1 when any failed.
"""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np
import mindspore as ms
from mindspore import nn, ops
from mindspore.common.initializer import Normal
from mindspore.train import mind_ir_pb2
# onnx after mindspore: with onnx imported first, mindspore's own _pb2 modules
# fail to load under protobuf 7 ("Descriptors cannot be created directly").
from onnx import numpy_helper

SMALL_LIMIT = 2 * 1024 * 1024


# ---------------------------------------------------------------- networks

class LeNet5(nn.Cell):
    """LeNet-5 as MindSpore's model zoo writes it."""

    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def _conv(in_ch, out_ch, kernel, stride=1):
    # The model zoo pads explicitly ("pad") rather than "same", so the
    # exported Conv2D carries pad_list; 1x1 convolutions need no padding.
    pad = kernel // 2
    return nn.Conv2d(in_ch, out_ch, kernel, stride=stride,
                     pad_mode="pad" if pad else "valid", padding=pad, has_bias=False)


def _bn(ch):
    return nn.BatchNorm2d(ch, eps=1e-5, momentum=0.9)


class ResidualBlock(nn.Cell):
    """ResNet-50 bottleneck: 1x1 reduce, 3x3 (carrying the stride), 1x1 expand."""
    expansion = 4

    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        mid = out_ch // self.expansion
        self.conv1, self.bn1 = _conv(in_ch, mid, 1), _bn(mid)
        self.conv2, self.bn2 = _conv(mid, mid, 3, stride), _bn(mid)
        self.conv3, self.bn3 = _conv(mid, out_ch, 1), _bn(out_ch)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_ch != out_ch
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([_conv(in_ch, out_ch, 1, stride), _bn(out_ch)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class ResNet50(nn.Cell):
    """ResNet-50 as MindSpore's model zoo writes it (blocks [3, 4, 6, 3])."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1, self.bn1 = _conv(3, 64, 7, stride=2), _bn(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.layer1 = self._make_layer(3, 64, 256, 1)
        self.layer2 = self._make_layer(4, 256, 512, 2)
        self.layer3 = self._make_layer(6, 512, 1024, 2)
        self.layer4 = self._make_layer(3, 1024, 2048, 2)
        self.mean = ops.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.end_point = nn.Dense(2048, num_classes)

    @staticmethod
    def _make_layer(num_blocks, in_ch, out_ch, stride):
        blocks = [ResidualBlock(in_ch, out_ch, stride)]
        blocks += [ResidualBlock(out_ch, out_ch) for _ in range(num_blocks - 1)]
        return nn.SequentialCell(blocks)

    def construct(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.mean(x, (2, 3))
        return self.end_point(self.flatten(x))


class SelfAttention(nn.Cell):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q = nn.Dense(hidden, hidden)
        self.k = nn.Dense(hidden, hidden)
        self.v = nn.Dense(hidden, hidden)
        self.out = nn.Dense(hidden, hidden)
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.softmax = nn.Softmax(axis=-1)
        self.bmm = ops.BatchMatMul()
        self.bmm_t = ops.BatchMatMul(transpose_b=True)

    def _split(self, x, b, s):
        # [b, s, hidden] -> [b, heads, s, head_dim]
        return ops.transpose(ops.reshape(x, (b, s, self.heads, self.head_dim)), (0, 2, 1, 3))

    def construct(self, x):
        b, s, h = x.shape
        q = self._split(self.q(x), b, s)
        k = self._split(self.k(x), b, s)
        v = self._split(self.v(x), b, s)
        probs = self.softmax(self.bmm_t(q, k) * self.scale)
        ctx = ops.reshape(ops.transpose(self.bmm(probs, v), (0, 2, 1, 3)), (b, s, h))
        return self.out(ctx)


class EncoderLayer(nn.Cell):
    """Post-LayerNorm BERT layer: attention and feed-forward, each residual + LayerNorm."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.norm1 = nn.LayerNorm((hidden,))
        self.ffn_in = nn.Dense(hidden, ffn)
        self.gelu = nn.GELU()
        self.ffn_out = nn.Dense(ffn, hidden)
        self.norm2 = nn.LayerNorm((hidden,))

    def construct(self, x):
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ffn_out(self.gelu(self.ffn_in(x))))


class BertEncoder(nn.Cell):
    def __init__(self, vocab=100, hidden=64, heads=4, ffn=128, layers=2, max_len=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.position = ms.Parameter(
            ms.Tensor(np.random.normal(0, 0.02, (1, max_len, hidden)).astype(np.float32)), name="position")
        self.layers = nn.CellList([EncoderLayer(hidden, heads, ffn) for _ in range(layers)])

    def construct(self, ids):
        x = self.embedding(ids) + self.position
        for layer in self.layers:
            x = layer(x)
        return x


class LSTMNet(nn.Cell):
    """Flattens (output, (hn, cn)) so that each is one graph output."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=8, hidden_size=16, num_layers=2,
                            bidirectional=True, batch_first=True)

    def construct(self, x, h0, c0):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return out, hn, cn


class ControlFlow(nn.Cell):
    """A data-dependent while loop and an if on a tensor value: both stay
    control flow in the graph (MindIR sub-graphs) instead of being unrolled."""

    def construct(self, x, n):
        i = ops.zeros((), ms.int32)
        while i < n:
            x = x * 0.5 + 1.0
            i = i + 1
        if x.sum() > 10.0:
            x = x - 1.0
        else:
            x = x * 2.0
        return x


class MixedPrecisionMLP(nn.Cell):
    """Dense layers computed in float16 (to_float casts their inputs), the
    result cast back to float32 before the softmax."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(16, 32).to_float(ms.float16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(32, 8).to_float(ms.float16)
        self.softmax = nn.Softmax(axis=-1)

    def construct(self, x):
        x = self.fc2(self.relu(self.fc1(x)))
        return self.softmax(ops.cast(x, ms.float32))


def _f32(*shape):
    return np.random.standard_normal(shape).astype(np.float32)


# name -> (network builder, inputs builder, description). Both run right
# after the seeds are reset, so a network's weights and inputs do not depend
# on which other networks were asked for (the graph input names do: MindSpore
# prefixes them with per-process compile counters).
NETWORKS = {
    "lenet": (LeNet5, lambda: [_f32(1, 1, 32, 32)],
              "LeNet-5 (model zoo): Conv2d valid, ReLU, MaxPool2d, Flatten, Dense 400-120-84-10"),
    "resnet50": (ResNet50, lambda: [_f32(1, 3, 224, 224)],
                 "ResNet-50 (model zoo): bottleneck [3,4,6,3], Conv2d pad, BatchNorm2d inference, "
                 "MaxPool2d same, ReduceMean global pool, Dense 2048-1000"),
    "bert_encoder": (BertEncoder, lambda: [np.random.randint(0, 100, (1, 16)).astype(np.int32)],
                     "BERT-style encoder: Embedding 100x64 + position, 2 layers of 4-head "
                     "self-attention (BatchMatMul), LayerNorm, Dense 64-128 GELU 128-64"),
    "lstm": (LSTMNet, lambda: [_f32(2, 5, 8), _f32(4, 2, 16), _f32(4, 2, 16)],
             "nn.LSTM 8->16, 2 layers, bidirectional, batch_first; outputs output, hn, cn"),
    "control_flow": (ControlFlow, lambda: [_f32(2, 3), np.array(3, dtype=np.int32)],
                     "while i < n (data-dependent loop) then if x.sum() > 10 on the result"),
    "mixed_precision": (MixedPrecisionMLP, lambda: [_f32(4, 16)],
                        "MLP with float16 Dense layers (to_float), ReLU, cast to float32, Softmax"),
}


# ---------------------------------------------------------------- export

def graph_input_names(path, count):
    """Names of the exported graph's inputs, "" each where the file has none."""
    m = mind_ir_pb2.ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    names = [i.name for i in m.graph.input]
    return (names + [""] * count)[:count]


def write_pb(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())


def export_one(name, outdir):
    build, make_inputs, description = NETWORKS[name]
    ms.set_seed(0)
    np.random.seed(0)
    net = build()
    net.set_train(False)
    arrays = make_inputs()
    inputs = [ms.Tensor(a) for a in arrays]

    out = net(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    outs = [o.asnumpy() for o in outs]

    folder = os.path.join(outdir, name)
    tds = os.path.join(folder, "test_data_set_0")
    if os.path.isdir(folder):
        shutil.rmtree(folder)  # no stale input_/output_ files from an older run
    os.makedirs(tds)
    model = os.path.join(folder, "model.mindir")
    # export appends ".mindir" to file_name itself.
    ms.export(net, *inputs, file_name=model[:-len(".mindir")], file_format="MINDIR")
    # export leaves the file 0400; copies of it (--small-to, a checkout's
    # testdata) would then refuse to be overwritten by the next run.
    os.chmod(model, 0o644)

    for i, (a, n) in enumerate(zip(arrays, graph_input_names(model, len(arrays)))):
        write_pb(os.path.join(tds, "input_%d.pb" % i), a, n)
    for i, o in enumerate(outs):
        write_pb(os.path.join(tds, "output_%d.pb" % i), o, "")

    meta = {
        "name": name,
        "mindspore": ms.__version__,
        "inputs": [[list(a.shape), str(a.dtype)] for a in arrays],
        "outputs": [[list(o.shape), str(o.dtype)] for o in outs],
        "description": description,
    }
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return folder, os.path.getsize(model)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*", help="networks to export (default: all): " + ", ".join(NETWORKS))
    ap.add_argument("--small-to", metavar="DIR",
                    help="copy each network folder whose model.mindir is under 2 MB to DIR/NAME")
    args = ap.parse_args()

    unknown = [n for n in args.names if n not in NETWORKS]
    if unknown:
        ap.error("unknown network(s): %s (known: %s)" % (", ".join(unknown), ", ".join(NETWORKS)))

    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    failed = False
    for name in args.names or list(NETWORKS):
        try:
            folder, size = export_one(name, args.outdir)
        except Exception as e:  # one network's failure must not stop the others
            failed = True
            reason = " | ".join(x.strip() for x in str(e).splitlines() if x.strip())[:500]
            print("export_nets: %s FAILED: %s: %s" % (name, type(e).__name__, reason), flush=True)
            continue
        if args.small_to and size < SMALL_LIMIT:
            dest = os.path.join(args.small_to, name)
            if os.path.isdir(dest):
                shutil.rmtree(dest)
            shutil.copytree(folder, dest)
        print("export_nets: %s ok (%d bytes)" % (name, size), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
