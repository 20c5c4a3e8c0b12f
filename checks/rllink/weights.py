"""Checking a SET_STATE's weights: the json dialect's ONNX file, the msgpack dialect's module arrays."""

from __future__ import annotations

import base64
import binascii
import importlib
import zlib
from typing import Any

import numpy as np

from checks.errors import CheckError
from checks.rllink.codec import BadArray, Dialect
from checks.rllink.options import RLlinkOptions

MAX_MODEL = 256 * 1024 * 1024


class WeightsProblem(CheckError):
    """The weights are not usable; the message says why."""


class NotJudged(CheckError):
    """The weights cannot be judged here (onnxruntime is missing)."""


def seq_of(message: dict[str, Any], dialect: Dialect) -> int:
    holder = message if dialect == "json" else message.get("state")
    seq = holder.get("weights_seq_no") if isinstance(holder, dict) else None
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise WeightsProblem(f"weights_seq_no is {seq!r}, not an int >= 0")
    return seq


def check_weights(message: dict[str, Any], dialect: Dialect, options: RLlinkOptions) -> str:
    """What was found, when the weights are usable; WeightsProblem or NotJudged otherwise."""
    return _onnx(message, options) if dialect == "json" else _module(message)


def _module(message: dict[str, Any]) -> str:
    state = message.get("state")
    module = state.get("rl_module") if isinstance(state, dict) else None
    if not isinstance(module, dict) or not module:
        raise WeightsProblem("state.rl_module is not a non-empty map")
    arrays = 0

    def walk(value: Any, path: str) -> None:
        nonlocal arrays
        if isinstance(value, BadArray):
            raise WeightsProblem(f"{path}: {value.reason}")
        if isinstance(value, np.ndarray):
            arrays += 1
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")

    walk(module, "rl_module")
    if not arrays:
        raise WeightsProblem("state.rl_module holds no arrays")
    return f"{arrays} well-formed arrays in state.rl_module"


# The last usable model judged: a server sends the same onnx_file again until it trains (GET_STATE
# twice in the handshake, again after a reconnect), and the judgement is a function of the text alone.
REMEMBERED_MODEL = 1024 * 1024  # characters of onnx_file; a larger one is judged every time, not kept
_last_usable: tuple[tuple[str, int, str, int], str] | None = None


def _onnx(message: dict[str, Any], options: RLlinkOptions) -> str:
    global _last_usable
    text = message.get("onnx_file")
    if not isinstance(text, str):
        raise WeightsProblem(f"onnx_file is {type(text).__name__}, not base64 text")
    key = (
        text,
        options.obs_size,
        options.action_space,
        options.action_n if options.action_space == "discrete" else options.action_dim,
    )
    if _last_usable is not None and _last_usable[0] == key:
        return _last_usable[1]
    found = _load_onnx(text, options)
    if len(text) <= REMEMBERED_MODEL:
        _last_usable = (key, found)
    return found


def _load_onnx(text: str, options: RLlinkOptions) -> str:
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise WeightsProblem(f"onnx_file is not base64: {exc}") from exc
    inflate = zlib.decompressobj(wbits=31)  # gzip, bounded so a bomb cannot exhaust memory
    try:
        model = inflate.decompress(packed, MAX_MODEL)
    except zlib.error as exc:
        raise WeightsProblem(f"onnx_file does not gunzip: {exc}") from exc
    if inflate.unconsumed_tail:
        raise WeightsProblem(f"the model inflates past {MAX_MODEL} bytes")
    try:
        ort = importlib.import_module("onnxruntime")
    except ImportError as exc:
        raise NotJudged("onnxruntime is not installed, so the model was not loaded") from exc
    try:
        # From bytes, never a temporary file: reading a file before it is flushed fails on models under 8 KiB.
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        outputs = session.run(None, {name: np.zeros((1, options.obs_size), np.float32)})
    except Exception as exc:  # onnxruntime raises its own types for every bad model
        raise WeightsProblem(f"the model does not load or run in onnxruntime: {type(exc).__name__}: {exc}") from exc
    logits = np.asarray(outputs[0])
    allowed = {options.logits} if options.action_space == "discrete" else {options.action_dim, options.logits}
    if logits.ndim != 2 or logits.shape[0] != 1 or logits.shape[1] not in allowed:
        raise WeightsProblem(f"[1, {options.obs_size}] maps to shape {list(logits.shape)}, not [1, {options.logits}]")
    return f"a {len(model)}-byte ONNX model mapping [1, {options.obs_size}] to {list(logits.shape)}"
