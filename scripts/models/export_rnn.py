#!/usr/bin/python3
"""Export the small recurrent test models of testdata/ (issue 13, item 7).

  testdata/lstm_seq:  2-layer LSTM (input 8, hidden 32, batch_first) + Linear(32, 4)
                      on x [2, 16, 8]; outputs y [2, 16, 4] and the final h [2, 2, 32].
  testdata/gru_bidir: bidirectional GRU (input 8, hidden 24) + Linear(48, 4) on
                      x [16, 2, 8] (sequence first); outputs y [16, 2, 4] and h [2, 2, 24].

Each folder gets model.onnx and test_data_set_0/input_0.pb (seeded); the
reference outputs (output_N.pb) come from onnxruntime:

  /usr/bin/python3 scripts/models/export_rnn.py   # needs torch and onnx
  for m in lstm_seq gru_bidir; do
    NODE_PATH=/tmp/ort/node_modules node ../shared/tools/ort/run_ort.js \
      testdata/$m/model.onnx --data testdata/$m/test_data_set_0 \
      --save-out testdata/$m/test_data_set_0
  done
"""
import os
import sys

import onnx
from onnx import TensorProto, helper
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class LSTMSeq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 32, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(32, 4)

    def forward(self, x):
        y, (h, _) = self.rnn(x)
        return self.fc(y), h


class GRUBidir(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(8, 24, bidirectional=True)
        self.fc = torch.nn.Linear(48, 4)

    def forward(self, x):
        y, h = self.rnn(x)
        return self.fc(y), h


def export(name, model, shape, seed):
    torch.manual_seed(seed)
    model = model()
    model.eval()
    x = torch.randn(*shape)
    d = os.path.join(ROOT, "testdata", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y", "h"], opset_version=14)
    onnx.checker.check_model(onnx.load(path))
    t = helper.make_tensor("x", TensorProto.FLOAT, list(x.shape), x.flatten().tolist())
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(t.SerializeToString())
    print(name, os.path.getsize(path), "bytes", file=sys.stderr)


if __name__ == "__main__":
    export("lstm_seq", LSTMSeq, (2, 16, 8), 1)
    export("gru_bidir", GRUBidir, (16, 2, 8), 2)
