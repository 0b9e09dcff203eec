#!/usr/bin/env python3
"""Export a small detection head with NonMaxSuppression to ONNX.

The head: a 3x3 conv over a feature map predicts, per cell, 4 box
offsets and C class logits; boxes are cell centres plus the offsets
(x1, y1, x2, y2), scores are sigmoid(logits). torchvision's batched NMS
(exported as ONNX NonMaxSuppression) picks boxes per class, a score
threshold (exported with NonZero) drops the weak ones and Gathers return
the selected boxes with their scores and labels: every output's length
depends on the data.

Usage: /usr/bin/python3 scripts/models/detection_head.py OUT_DIR
writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/input_0.pb; the
reference outputs come from onnxruntime:
  node /work/shared/tools/ort/run_ort.js OUT_DIR --random --seed 7 \
      --save-out OUT_DIR/test_data_set_0
"""
import os
import sys

import torch
import torchvision


class DetectionHead(torch.nn.Module):
    def __init__(self, channels=8, classes=3, grid=8):
        super().__init__()
        self.classes = classes
        self.pred = torch.nn.Conv2d(channels, 4 + classes, 3, padding=1)
        ys, xs = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
        centres = torch.stack([xs, ys, xs, ys], dim=-1).reshape(-1, 4).float() + 0.5
        self.register_buffer("centres", centres)

    def forward(self, feat):
        p = self.pred(feat)                      # [1, 4+C, H, W]
        p = p.flatten(2).transpose(1, 2)[0]      # [H*W, 4+C]
        d = torch.tanh(p[:, :4]) * 2.0
        boxes = self.centres + torch.stack([-d[:, 0].abs(), -d[:, 1].abs(), d[:, 2].abs(), d[:, 3].abs()], dim=1)
        scores = torch.sigmoid(p[:, 4:])         # [H*W, C]
        best, label = scores.max(dim=1)
        keep = torchvision.ops.batched_nms(boxes, best, label, 0.3)
        keep = keep[best[keep] > 0.6]            # exported as NonZero
        return boxes[keep], best[keep], label[keep]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/detection_head"
    torch.manual_seed(0)
    m = DetectionHead().eval()
    feat = torch.randn(1, 8, 8, 8)
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(m, (feat,), os.path.join(out, "model.onnx"), opset_version=13,
                      input_names=["feat"], output_names=["boxes", "scores", "labels"],
                      do_constant_folding=True)


if __name__ == "__main__":
    main()
