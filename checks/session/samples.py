"""The /samples wire format: one safetensors blob of per-sample tensors plus a `_samples_meta` JSON tensor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from safetensors.numpy import load, save

from checks.errors import Malformed

META_KEY = "_samples_meta"
DTYPES = {
    "tokens": np.dtype("int64"),
    "loss_mask": np.dtype("uint8"),
    "rollout_log_probs": np.dtype("float64"),
    "rollout_routed_experts": np.dtype("int32"),
    "rollout_indexer_topk": np.dtype("int32"),
}
REQUIRED = ("tokens", "loss_mask", "rollout_log_probs")
EMPTY_REASONS = (None, "no_records", "all_truncated")


class SamplesFormatError(Malformed):
    """A samples blob that is not the safetensors layout the format pins (`reason` says what is off)."""


@dataclass
class WireSample:
    tensors: dict[str, np.ndarray]
    fields: dict[str, Any]


def encode_samples(samples: list[WireSample], session_metadata: dict[str, Any], empty_reason: str | None) -> bytes:
    tensors: dict[str, np.ndarray] = {}
    for index, sample in enumerate(samples):
        for name, array in sample.tensors.items():
            tensors[f"{name}.{index}"] = np.ascontiguousarray(array)
    meta = {"samples": [s.fields for s in samples], "session_metadata": session_metadata, "empty_reason": empty_reason}
    tensors[META_KEY] = np.frombuffer(json.dumps(meta, separators=(",", ":")).encode(), dtype=np.uint8).copy()
    return save(tensors)


def decode_samples(blob: bytes) -> tuple[list[WireSample], dict[str, Any]]:
    """The samples and the meta; SamplesFormatError names the first thing that is not as the format pins it."""
    try:
        tensors = load(blob)
    except Exception as exc:  # safetensors raises its own and plain errors on a bad header
        raise SamplesFormatError(f"not a safetensors blob: {exc}") from None
    if META_KEY not in tensors:
        raise SamplesFormatError(f"no {META_KEY} tensor")
    raw = tensors.pop(META_KEY)
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise SamplesFormatError(f"{META_KEY} is {raw.dtype} rank {raw.ndim}, not rank-1 uint8")
    try:
        meta = json.loads(raw.tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SamplesFormatError(f"{META_KEY} is not UTF-8 JSON: {exc}") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("samples"), list):
        raise SamplesFormatError(f"{META_KEY} holds no samples list")
    samples = []
    for index, fields in enumerate(meta["samples"]):
        own = {}
        for name, dtype in DTYPES.items():
            array = tensors.pop(f"{name}.{index}", None)
            if array is None:
                if name in REQUIRED:
                    raise SamplesFormatError(f"sample {index} has no {name}.{index} tensor")
                continue
            if array.dtype != dtype:
                raise SamplesFormatError(f"{name}.{index} is {array.dtype}, the format pins {dtype}")
            own[name] = array
        samples.append(WireSample(own, fields if isinstance(fields, dict) else {}))
    if tensors:
        raise SamplesFormatError(f"tensors no sample refers to: {sorted(tensors)[:5]}")
    return samples, meta
