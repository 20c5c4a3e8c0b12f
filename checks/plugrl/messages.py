"""The messages the plugrl-server suite sends: well-formed ones, and the malformed frames of the errors phase.

Observations are a pure function of the env indices, so the exchange phase
can match an env's action row across batches when the policy is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

from checks.evidence import summarize
from checks.plugrl.codec import CodecError, pack, unpack

BIG_FRAME_PIXELS = 512  # three envs of 512x512x3 uint8: 2.25 MiB, over the common 1 MiB cap
# Envs are 0.25 apart, so a nudged observation is never another env's.
NUDGE = 0.1


def observation(options: Any, envs: list[int], big: bool = False, nudged: int | None = None) -> dict[str, Any]:
    """A states-only observation (plus an optional camera), a pure function of the env indices.

    `nudged`: the env whose observation is moved off its usual value.
    """
    rows = np.asarray(envs, dtype=np.float64).reshape(-1, 1) * 0.25
    rows[np.asarray(envs) == nudged] += NUDGE
    states = {options.state_key: rows + np.linspace(-1.0, 1.0, options.state_dim)}
    images: dict[str, np.ndarray] = {}
    if options.image_key:
        size = options.image_size
        images[options.image_key] = np.zeros((len(envs), size, size, 3), dtype=np.uint8)
    if big:
        images["conformance_padding"] = np.zeros((len(envs), BIG_FRAME_PIXELS, BIG_FRAME_PIXELS, 3), dtype=np.uint8)
    # A `<U` array even for zero rows (an all-reused infer), as plugrl-env-client sends text.
    return {"images": images, "states": states, "text": np.asarray(["probe"] * len(envs), dtype="<U5")}


def episode_info(done: list[bool]) -> dict[str, Any]:
    """The per-env `episode` statistics servers read on terminal transitions."""
    return {
        "episode": {
            "r": np.asarray([5.0 if d else 0.0 for d in done], dtype=np.float32),
            "l": np.asarray([5 if d else 0 for d in done], dtype=np.int64),
            "s": np.zeros(len(done), dtype=np.bool_),
            "mask": np.asarray(done, dtype=np.bool_),
        }
    }


def infer_message(
    options: Any, envs: list[int], big: bool = False, reuse: list[bool] | None = None, nudged: int | None = None
) -> dict[str, Any]:
    sent_rows = envs if reuse is None else [env for env, reused in zip(envs, reuse, strict=True) if not reused]
    message: dict[str, Any] = {
        "message_type": "infer",
        "data": observation(options, sent_rows, big, nudged),
        "env_indices": np.asarray(envs, dtype=np.int64),
        "step_ids": np.zeros(len(envs), dtype=np.int64),
    }
    if reuse is not None:
        message["reuse"] = np.asarray(reuse, dtype=np.bool_)
    return message


def feedback_message(
    options: Any, envs: list[int], done: list[bool] | None = None, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    done = done or [False] * len(envs)
    if info is None:
        info = episode_info(done) if any(done) else {}
    return {
        "message_type": "feedback",
        "env_indices": np.asarray(envs, dtype=np.int64),
        "step_ids": np.zeros(len(envs), dtype=np.int64),
        "data": {
            "obs": observation(options, envs),
            "rewards": np.ones(len(envs), dtype=np.float32),
            "terminated": np.asarray(done, dtype=np.bool_),
            "truncated": np.zeros(len(envs), dtype=np.bool_),
            "info": info,
        },
    }


# ---------------------------------------------------------------- malformed frames


def _missing(key: str) -> Callable[[Any], bytes]:
    def frame(options: Any) -> bytes:
        message = infer_message(options, [0])
        del message[key]
        return pack(message)

    return frame


def _feedback_first(options: Any) -> bytes:
    return pack(feedback_message(options, [0]))


def _not_msgpack(options: Any) -> bytes:
    return b"\xc1\xc1 this is not msgpack \xc1"


def _short_ndarray(options: Any) -> bytes:
    message = infer_message(options, [0, 1])
    message["env_indices"] = {b"__ndarray__": True, b"data": b"\0" * 8, b"dtype": "<i8", b"shape": [2]}
    return pack(message)


def _double_infer(options: Any) -> bytes:
    return pack(infer_message(options, [0, 1]))


def _unsplittable_info(options: Any) -> bytes:
    return pack(feedback_message(options, [0, 1], info={"task": "pick"}))


# (clause, what the fault is, whether it follows an answered infer, the faulty frame)
FAULTS: tuple[tuple[str, str, bool, Callable[[Any], bytes]], ...] = (
    ("plugrl.7.2.resync-malformed", "an infer with no env_indices", False, _missing("env_indices")),
    ("plugrl.7.2.resync-malformed", "an infer with no step_ids", False, _missing("step_ids")),
    ("plugrl.7.2.resync-wrong-type", "a feedback where an infer was due", False, _feedback_first),
    ("plugrl.7.2.resync-not-msgpack", "a binary frame that is not msgpack", False, _not_msgpack),
    (
        "plugrl.7.2.resync-bad-ndarray",
        "an env_indices ndarray with 8 data bytes for shape [2] <i8",
        False,
        _short_ndarray,
    ),
    ("plugrl.4.2.resync-double-infer", "a second infer where a feedback was due", True, _double_infer),
    (
        "plugrl.5.4.resync-unsplittable-info",
        'a feedback for 2 envs with info {"task": "pick"}',
        True,
        _unsplittable_info,
    ),
)


def reuse_as_ints(options: Any) -> dict[str, Any]:
    """Reusing env 0 of [0, 1] with a 0/1 `<i8` mask: off the |b1 form, but with one meaning."""
    message = infer_message(options, [0, 1], reuse=[True, False])
    message["reuse"] = np.asarray([1, 0], dtype=np.int64)
    return message


# Infers whose `reuse` no server can answer correctly, sent once envs 0 and 1 were fed back (not
# terminally) on the connection, so an honourable reuse [True, False] would be answered:
# (what is wrong, the message).
def _reuse_too_short(options: Any) -> dict[str, Any]:
    message = infer_message(options, [0, 1], reuse=[True, False])
    message["reuse"] = np.asarray([True], dtype=np.bool_)
    return message


def _reuse_rows_disagree(options: Any) -> dict[str, Any]:
    message = infer_message(options, [0, 1])  # both rows sent ...
    message["reuse"] = np.asarray([True, False], dtype=np.bool_)  # ... though env 0 reuses
    return message


MALFORMED_REUSES: tuple[tuple[str, Callable[[Any], dict[str, Any]]], ...] = (
    ("a reuse of length 1 for 2 envs", _reuse_too_short),
    ("a reuse [True, False] with 2 observation rows, not 1", _reuse_rows_disagree),
)


def fault_summary(what: str, frame: bytes) -> str:
    """How a fault frame shows in a transcript: what is wrong with it, then what it holds, decoded.

    A frame the codec refuses (that is often the point) is decoded as plain
    msgpack, and one that is not msgpack at all shows its first bytes.
    """
    try:
        content = summarize(unpack(frame))
    except CodecError:
        try:
            content = summarize(msgpack.unpackb(frame, raw=False, strict_map_key=False, max_ext_len=0))
        except Exception:  # not msgpack at all: the bytes themselves are the content
            content = f"bytes {frame[:48]!r}" + ("…" if len(frame) > 48 else "")
    return f"fault: {what} ({len(frame)} bytes): {content}"
