"""The messages of the zoo's PlugRL server: its own small codec and what it checks in client messages.

Kept apart from `checks/plugrl/codec.py` and `validation.py` so the zoo does
not move when the checker's code does, and because some zoo servers must
emit frames no codec would.
"""

from __future__ import annotations

import math
from typing import Any

import msgpack
import numpy as np

OBSERVATION_KEYS = {"images", "states", "text"}
FEEDBACK_KEYS = {"obs", "rewards", "terminated", "truncated", "info"}


class ProtocolError(Exception):
    """The client broke the protocol; `kind` says how, so a fault can pick its case.

    Kinds: "text" (a text frame), "msgpack" (not msgpack, or not a map),
    "array" (a malformed ndarray), "type" (not an infer where one was due),
    "sequence" (not a feedback where one was due), "infer" (a malformed
    infer), "feedback" (a malformed feedback), "info" (an info that cannot
    be split per env), "reuse" (a reuse the server cannot honour).
    """

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind


# ---------------------------------------------------------------- codec


def _pack_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {
            b"__ndarray__": True,
            b"data": np.ascontiguousarray(value).tobytes(),
            b"dtype": value.dtype.str,
            b"shape": list(value.shape),
        }
    if isinstance(value, np.generic):
        return {b"__npgeneric__": True, b"data": value.item(), b"dtype": value.dtype.str}
    raise TypeError(f"cannot pack {type(value).__name__}")


def pack(message: Any) -> bytes:
    return msgpack.packb(message, default=_pack_default, use_bin_type=True)


def _array_hook(item: dict) -> Any:
    if item.get(b"__ndarray__") is True:
        try:
            dtype = np.dtype(item[b"dtype"])
            shape = tuple(int(s) for s in item[b"shape"])
            data = item[b"data"]
        except (KeyError, TypeError, ValueError) as exc:
            raise ProtocolError("array", f"bad ndarray header: {exc}") from None
        if dtype.kind not in "biufU" or any(s < 0 for s in shape):
            raise ProtocolError("array", f"unsupported ndarray {dtype.str} {shape}")
        if not isinstance(data, bytes) or len(data) != math.prod(shape) * dtype.itemsize:
            raise ProtocolError("array", "ndarray data length disagrees with its shape")
        return np.frombuffer(data, dtype).reshape(shape)
    if item.get(b"__npgeneric__") is True:
        return np.dtype(item[b"dtype"]).type(item[b"data"])
    return item


def unpack(frame: bytes | str) -> dict:
    """A client frame as a message map, or ProtocolError."""
    if isinstance(frame, str):
        raise ProtocolError("text", "a text frame")
    try:
        message = msgpack.unpackb(frame, object_hook=_array_hook, raw=False, strict_map_key=False)
    except ProtocolError:
        raise
    except Exception as exc:
        raise ProtocolError("msgpack", f"not msgpack: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise ProtocolError("msgpack", "the message is not a map")
    return message


# ---------------------------------------------------------------- validation


def int_vector(value: Any, name: str, kind: str, length: int | None = None) -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype.kind not in "iu":
        raise ProtocolError(kind, f"{name} is not a 1-D integer array")
    if length is not None and len(value) != length:
        raise ProtocolError(kind, f"{name} has {len(value)} entries, expected {length}")
    return value


def flag_vector(value: Any, name: str, length: int, kind: str = "feedback") -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.dtype.kind != "b" or value.shape != (length,):
        raise ProtocolError(kind, f"{name} is not a bool array of length {length}")
    return value


def observation_rows(obs: Any, kind: str) -> int | None:
    """The shared leading dimension of an observation, None when it holds no array."""
    if not isinstance(obs, dict) or set(obs) != OBSERVATION_KEYS:
        raise ProtocolError(kind, "the observation does not have exactly images, states and text")
    leading: set[int] = set()
    for group in ("images", "states"):
        if not isinstance(obs[group], dict):
            raise ProtocolError(kind, f"{group} is not a map")
        for array in obs[group].values():
            if not isinstance(array, np.ndarray) or array.ndim < 1:
                raise ProtocolError(kind, f"a value under {group} is not an array")
            leading.add(array.shape[0])
    text = obs["text"]
    if isinstance(text, np.ndarray) and text.ndim >= 1:
        leading.add(text.shape[0])
    elif isinstance(text, list):
        leading.add(len(text))
    if len(leading) > 1:
        raise ProtocolError(kind, f"the observation's arrays disagree on n: {sorted(leading)}")
    return leading.pop() if leading else None


def info_rows(info: Any) -> int:
    """How many per-env entries an info splits into (the first array, at most one level in)."""
    if not isinstance(info, dict):
        raise ProtocolError("feedback", "info is not a map")
    for value in info.values():
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            return value.shape[0]
    for value in info.values():
        if isinstance(value, dict):
            for inner in value.values():
                if isinstance(inner, np.ndarray) and inner.ndim >= 1:
                    return inner.shape[0]
    return 1


def row(obs: dict, index: int) -> dict:
    """One env's row of a batched observation, kept batched (leading dimension 1)."""

    def cut(value: Any) -> Any:
        return value[index : index + 1] if isinstance(value, (np.ndarray, list)) else value

    return {
        "images": {k: cut(v) for k, v in obs["images"].items()},
        "states": {k: cut(v) for k, v in obs["states"].items()},
        "text": cut(obs["text"]),
    }


def state_signals(obs: Any) -> list[float]:
    """One number per observation row, for a policy to follow: the mean of its first states array."""
    states = obs.get("states") if isinstance(obs, dict) else None
    if not isinstance(states, dict):
        return []
    arrays = [a for a in states.values() if isinstance(a, np.ndarray) and a.ndim >= 1]
    if not arrays or arrays[0].dtype.kind not in "biuf":
        return []
    return [float(np.mean(values)) for values in arrays[0].astype(np.float64)]
