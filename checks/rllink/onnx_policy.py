"""An MLP policy as the json dialect's SET_STATE carries it: a gzipped, base64 ONNX model.

Built with onnx's helper API (no torch): Gemm layers with an activation
between them, input `obs` [batch, obs_dim], output `logits` [batch, n].
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Sequence

import numpy as np

Layer = tuple[np.ndarray, np.ndarray]  # (weight [out, in], bias [out]), as torch's Linear holds them


def onnx_model(layers: Sequence[Layer], activation: str = "Relu", name: str = "rllink-policy") -> bytes:
    """The serialized model: Gemm per layer, `activation` after every layer but the last."""
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415  # only the json dialect needs onnx

    nodes, inits, current = [], [], "obs"
    for index, (weight, bias) in enumerate(layers):
        w, b, out = f"w{index}", f"b{index}", f"gemm{index}"
        inits += [numpy_helper.from_array(weight.astype(np.float32), w), numpy_helper.from_array(bias, b)]
        nodes.append(helper.make_node("Gemm", [current, w, b], [out], transB=1))
        current = out
        if index < len(layers) - 1:
            nodes.append(helper.make_node(activation, [out], [f"act{index}"]))
            current = f"act{index}"
    nodes.append(helper.make_node("Identity", [current], ["logits"]))
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", layers[0][0].shape[1]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", layers[-1][0].shape[0]])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    serialized: bytes = model.SerializeToString()
    return serialized


def onnx_file(layers: Sequence[Layer], activation: str = "Relu") -> str:
    """The model as the json dialect's `onnx_file`: base64 text of its gzip."""
    return base64.b64encode(gzip.compress(onnx_model(layers, activation))).decode()
