#!/usr/bin/python3
"""Export the tiny control-flow models under testdata/ (issue 13, item 7).

  testdata/cf_if/    an If: a scripted, data-dependent branch (the sign of a
                     linear layer's sum) whose else branch reads the outer
                     input x.
  testdata/cf_loop/  a data-dependent Loop: greedy decoding of a tiny
                     recurrent cell for at most 8 steps that stops early at
                     the end token; the tokens tensor grows each step.

Each folder gets model.onnx and test_data_set_0..1/input_N.pb; the reference
outputs come from onnxruntime:

  /usr/bin/python3 scripts/models/export_control_flow.py
  for d in testdata/cf_if testdata/cf_loop; do for s in $d/test_data_set_*; do
    NODE_PATH=/tmp/ort/node_modules node ../shared/tools/ort/run_ort.js $d/model.onnx --data $s --save-out $s --runs 1 --warmup 0
  done; done

Needs torch (TorchScript export) and onnx.
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata")


class IfNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if bool(h.sum() > 0):
            y = torch.relu(h) * 2.0
        else:
            y = torch.sigmoid(h) - x
        return y


class GreedyDecoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Parameter(torch.randn(6, 8) * 0.8)
        self.u = torch.nn.Parameter(torch.randn(8, 8) * 0.5)
        self.w = torch.nn.Parameter(torch.randn(8, 6))

    def forward(self, h):
        # tokens grows by one column per step: a loop-carried value whose
        # shape changes between iterations.
        tokens = torch.zeros((h.shape[0], 0), dtype=torch.long)
        for _ in range(8):
            tok = torch.argmax(torch.matmul(h, self.w), dim=1)
            tokens = torch.cat([tokens, tok.unsqueeze(1)], 1)
            if bool(tok[0] == 0):  # the end token stops decoding
                break
            h = torch.tanh(torch.matmul(h, self.u) + self.emb[tok])
        return tokens, h


def export(name, model, example, inputs, in_names, out_names):
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(torch.jit.script(model), example, path, opset_version=13,
                      input_names=in_names, output_names=out_names)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})
    print(name, "ops:", ops, file=sys.stderr)
    for i, arrs in enumerate(inputs):
        s = os.path.join(d, "test_data_set_%d" % i)
        os.makedirs(s, exist_ok=True)
        for k, a in enumerate(arrs):
            t = numpy_helper.from_array(a, in_names[k])
            with open(os.path.join(s, "input_%d.pb" % k), "wb") as f:
                f.write(t.SerializeToString())


def main():
    torch.manual_seed(7)
    rng = np.random.default_rng(7)
    ifnet = IfNet().eval()
    with torch.no_grad():
        ifnet.lin.bias.fill_(0.0)
    xs = [rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2)]
    # One input per branch: the sign of the linear layer's sum picks it.
    xs[1] = -xs[0]
    export("cf_if", ifnet, (torch.from_numpy(xs[0]),), [[x] for x in xs], ["x"], ["y"])

    dec = GreedyDecoder().eval()
    hs = [rng.standard_normal((1, 8)).astype(np.float32) for _ in range(2)]
    export("cf_loop", dec, (torch.from_numpy(hs[0]),), [[h] for h in hs], ["h0"], ["tokens", "h"])


if __name__ == "__main__":
    main()
