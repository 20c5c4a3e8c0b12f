"""rlmesh-wire-v1 values: spaces from the contract, leaves, containment, samples.

The wire carries raw little-endian leaves and no types, so everything is
decoded strictly from the `SpaceSpec` the handshake gave. Nothing here trusts
a byte count to say how many lanes there are: the caller says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.core import truncate
from checks.errors import Malformed
from checks.rlmesh.proto import spaces_pb2

DTYPES: dict[int, np.dtype[Any]] = {
    spaces_pb2.DATA_TYPE_BOOL: np.dtype("?"),
    spaces_pb2.DATA_TYPE_UINT8: np.dtype("<u1"),
    spaces_pb2.DATA_TYPE_UINT16: np.dtype("<u2"),
    spaces_pb2.DATA_TYPE_UINT32: np.dtype("<u4"),
    spaces_pb2.DATA_TYPE_UINT64: np.dtype("<u8"),
    spaces_pb2.DATA_TYPE_INT8: np.dtype("<i1"),
    spaces_pb2.DATA_TYPE_INT16: np.dtype("<i2"),
    spaces_pb2.DATA_TYPE_INT32: np.dtype("<i4"),
    spaces_pb2.DATA_TYPE_INT64: np.dtype("<i8"),
    spaces_pb2.DATA_TYPE_FLOAT16: np.dtype("<f2"),
    spaces_pb2.DATA_TYPE_FLOAT32: np.dtype("<f4"),
    spaces_pb2.DATA_TYPE_FLOAT64: np.dtype("<f8"),
}
# A same-kind dtype of another width, used to send a deliberately wrong dtype.
OTHER_WIDTH = {
    "f2": "<f4",
    "f4": "<f8",
    "f8": "<f4",
    "i8": "<i4",
    "i4": "<i8",
    "i2": "<i4",
    "i1": "<i2",
    "u1": "<u2",
    "u2": "<u1",
    "u4": "<u8",
    "u8": "<u4",
    "b1": "<u2",
}
MAX_ELEMENTS = 1 << 24  # a contract declaring more per lane is refused, not allocated
PROTOCOL_MAX_MESSAGE = 256 * 1024 * 1024  # rlmesh's own message limit: one lane must fit in it
PRINTABLE = "abcdefghijklmnopqrstuvwxyz0123456789"


class ContractError(Malformed):
    """The contract's space cannot be used as declared."""


class BeyondChecker(ContractError):
    """A legal space too large for the checker to handle: not judged rather than wrong."""


class ValueMismatch(Malformed):
    """A value does not fit its space (layout or domain)."""


@dataclass
class Space:
    kind: str  # box, discrete, multi_binary, multi_discrete, text, dict, tuple
    shape: tuple[int, ...] = ()
    dtype: np.dtype[Any] | None = None
    low: np.ndarray[Any, Any] | None = None
    high: np.ndarray[Any, Any] | None = None
    n: int = 0
    start: int = 0
    nvec: tuple[int, ...] = ()
    min_length: int = 0
    max_length: int = 0
    charset: str = ""
    children: list[tuple[str, Space]] = field(default_factory=list)

    @property
    def leaf_dtype(self) -> np.dtype[Any]:
        """The dtype of a numeric leaf; every leaf but text has one."""
        if self.dtype is None:
            raise ValueMismatch(f"a {self.kind} space has no dtype")
        return self.dtype

    @property
    def bounds(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """A Box leaf's low and high arrays."""
        if self.low is None or self.high is None:
            raise ValueMismatch(f"a {self.kind} space has no bounds")
        return self.low, self.high

    @property
    def numel(self) -> int:
        return math.prod(self.shape)  # Python ints: a hostile shape must not wrap around to a small count

    def describe(self) -> str:
        if self.kind in ("dict", "tuple"):
            inner = ", ".join(f"{key}: {child.describe()}" for key, child in self.children[:6])
            return f"{self.kind}({inner}{', …' if len(self.children) > 6 else ''})"
        if self.kind == "discrete":
            return f"Discrete(n={self.n}, start={self.start})"
        if self.kind == "text":
            return f"Text({self.min_length}..{self.max_length})"
        return f"{self.kind}{list(self.shape)} {self.dtype.str if self.dtype is not None else '?'}"


def space_from_proto(spec: spaces_pb2.SpaceSpec, path: str = "$", depth: int = 0) -> Space:
    """The space a SpaceSpec declares, or ContractError naming what is wrong and where."""
    if depth > 8:
        raise ContractError(f"{path}: spaces nested deeper than 8 levels")
    kind = spec.WhichOneof("spec")
    if kind is None:
        raise ContractError(f"{path}: no space kind set (the spec oneof is empty)")
    shape = tuple(int(d) for d in spec.shape)
    if any(d < 0 for d in shape):
        raise ContractError(f"{path}: negative dimension in shape {list(shape)}")
    if kind in ("dict", "tuple"):
        return _composite(spec, kind, shape, path, depth)
    if spec.dtype not in DTYPES:
        raise ContractError(f"{path}: unknown or unspecified dtype {spec.dtype}")
    dtype = DTYPES[spec.dtype]
    space = Space(kind, shape, dtype)
    if space.numel * dtype.itemsize > PROTOCOL_MAX_MESSAGE:
        raise ContractError(
            f"{path}: shape {list(shape)[:8]} needs more bytes per lane than the protocol's "
            f"{PROTOCOL_MAX_MESSAGE} byte message limit"
        )
    if space.numel > MAX_ELEMENTS:
        raise BeyondChecker(f"{path}: {space.numel} elements per lane is beyond the checker's limit")
    _LEAF_READERS.get(kind, _no_parameters)(space, spec, path)
    return space


def _composite(spec: spaces_pb2.SpaceSpec, kind: str, shape: tuple[int, ...], path: str, depth: int) -> Space:
    if kind == "dict":
        keys, specs = list(spec.dict.keys), list(spec.dict.spaces)
        if len(keys) != len(specs):
            raise ContractError(f"{path}: dict has {len(keys)} keys but {len(specs)} spaces")
        if len(set(keys)) != len(keys):
            raise ContractError(f"{path}: dict keys repeat: {[truncate(k, 40) for k in keys[:8]]}")
    else:
        specs = list(spec.tuple.spaces)
        keys = [str(i) for i in range(len(specs))]
    children = [(key, space_from_proto(sub, f"{path}.{key}", depth + 1)) for key, sub in zip(keys, specs, strict=False)]
    return Space(kind, shape, children=children)


def _no_parameters(space: Space, spec: spaces_pb2.SpaceSpec, path: str) -> None:
    """MultiBinary: the shape and dtype say it all."""


def _box(space: Space, spec: spaces_pb2.SpaceSpec, path: str) -> None:
    space.low, space.high = _box_bounds(spec.box, space.leaf_dtype, space.shape, path)


def _discrete(space: Space, spec: spaces_pb2.SpaceSpec, path: str) -> None:
    space.n, space.start = int(spec.discrete.n), int(spec.discrete.start)
    if space.n <= 0:
        raise ContractError(f"{path}: Discrete n={space.n} must be positive")
    _representable(space.leaf_dtype, space.start, space.start + space.n - 1, path, "Discrete")


def _multi_discrete(space: Space, spec: spaces_pb2.SpaceSpec, path: str) -> None:
    space.nvec = tuple(int(v) for v in spec.multi_discrete.nvec)
    if any(v <= 0 for v in space.nvec) or len(space.nvec) != space.numel:
        raise ContractError(f"{path}: MultiDiscrete nvec {list(space.nvec)[:8]} does not fit shape {list(space.shape)}")
    _representable(space.leaf_dtype, 0, max(space.nvec, default=1) - 1, path, "MultiDiscrete")


def _text(space: Space, spec: spaces_pb2.SpaceSpec, path: str) -> None:
    text = spec.text
    space.min_length, space.max_length, space.charset = int(text.min_length), int(text.max_length), text.charset
    if not 0 <= space.min_length <= space.max_length:
        raise ContractError(f"{path}: Text lengths {space.min_length}..{space.max_length} are not 0 <= min <= max")
    if space.min_length > PROTOCOL_MAX_MESSAGE:
        raise ContractError(f"{path}: Text min_length {space.min_length} is beyond the protocol's message limit")


_LEAF_READERS = {"box": _box, "discrete": _discrete, "multi_discrete": _multi_discrete, "text": _text}


def _representable(dtype: np.dtype[Any], low: int, high: int, path: str, kind: str) -> None:
    """The values a discrete space declares must fit its dtype, or no value of it can be sent."""
    if dtype.kind not in "iu":
        raise ContractError(f"{path}: {kind} with the non-integer dtype {dtype.str}")
    info = np.iinfo(dtype)
    if low < info.min or high > info.max:
        raise ContractError(f"{path}: {kind} values {low}..{high} do not fit its dtype {dtype.str}")


def _box_bounds(
    box: spaces_pb2.BoxSpec, dtype: np.dtype[Any], shape: tuple[int, ...], path: str
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    numel = math.prod(shape)
    which = box.WhichOneof("bounds")
    if which in (None, "unbounded"):
        if dtype.kind == "f":
            return np.full(shape, -np.inf), np.full(shape, np.inf)
        info = np.iinfo(dtype) if dtype.kind in "iu" else None
        least = info.min if info else 0
        most = info.max if info else 1
        return np.full(shape, least, dtype=object), np.full(shape, most, dtype=object)
    bounds = box.uniform if which == "uniform" else box.elementwise
    count = 1 if which == "uniform" else numel
    for name in ("low", "high"):
        got = len(getattr(bounds, name))
        if got != count * dtype.itemsize:
            raise ContractError(f"{path}: Box {which} {name} is {got} bytes, expected {count} x {dtype.itemsize}")
    low = np.frombuffer(bounds.low, dtype=dtype)
    high = np.frombuffer(bounds.high, dtype=dtype)
    if count == 1:
        low, high = np.broadcast_to(low, shape), np.broadcast_to(high, shape)
    else:
        low, high = low.reshape(shape), high.reshape(shape)
    if np.any(np.isnan(low.astype(np.float64))) or np.any(low > high):
        raise ContractError(f"{path}: Box low must be <= high everywhere")
    return low, high


def leaves_of(space: Space) -> list[tuple[str, Space]]:
    """Fundamental leaves in pre-order, with their paths (dict children in spec order)."""
    if space.kind in ("dict", "tuple"):
        out: list[tuple[str, Space]] = []
        for key, child in space.children:
            out.extend((f"{key}.{sub_path}" if sub_path else key, leaf) for sub_path, leaf in leaves_of(child))
        return out
    return [("", space)]


# ---------------------------------------------------------------- decoding


def decode(space: Space, value: Any, lanes: int) -> list[Any]:
    """One decoded array (or list of strings) per leaf, each batched over `lanes`.

    Raises ValueMismatch when the leaf count or a leaf's byte length does not
    fit dtype x shape x lanes (the wire form of a wrong dtype or shape).
    """
    leaves = leaves_of(space)
    got = list(value.leaves) if value is not None else []
    if len(got) != len(leaves):
        raise ValueMismatch(f"{len(got)} leaves, the space has {len(leaves)}")
    decoded: list[Any] = []
    for (path, leaf), data in zip(leaves, got, strict=False):
        where = path or "$"
        if leaf.kind == "text":
            decoded.append(_decode_text(data, lanes, where))
            continue
        dtype = leaf.leaf_dtype
        expected = lanes * leaf.numel * dtype.itemsize
        if len(data) != expected:
            raise ValueMismatch(
                f"{where}: {len(data)} bytes, expected {lanes} lanes x {leaf.numel} x {dtype.itemsize} "
                f"({dtype.str}) = {expected}"
            )
        decoded.append(np.frombuffer(data, dtype=dtype).reshape((lanes, *leaf.shape)))
    return decoded


def _decode_text(data: bytes, lanes: int, where: str) -> list[str]:
    if len(data) < 8 + 8 * lanes:
        raise ValueMismatch(f"{where}: text leaf of {len(data)} bytes is shorter than its header")
    count = int.from_bytes(data[:8], "little")
    if count != lanes:
        raise ValueMismatch(f"{where}: text leaf holds {count} strings for {lanes} lanes")
    sizes = [int.from_bytes(data[8 + 8 * i : 16 + 8 * i], "little") for i in range(lanes)]
    body = data[8 + 8 * lanes :]
    if sum(sizes) != len(body):
        raise ValueMismatch(f"{where}: text lengths sum to {sum(sizes)} but the body is {len(body)} bytes")
    out, offset = [], 0
    for size in sizes:
        try:
            out.append(body[offset : offset + size].decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueMismatch(f"{where}: text is not valid UTF-8") from None
        offset += size
    return out


def outside(space: Space, decoded: list[Any]) -> str | None:
    """Why the decoded value is not in the space, or None when every lane is inside."""
    for (path, leaf), data in zip(leaves_of(space), decoded, strict=False):
        where = path or "$"
        reason = _leaf_outside(leaf, data)
        if reason:
            return f"{where}: {reason}"
    return None


def _leaf_outside(leaf: Space, data: Any) -> str | None:
    if leaf.kind == "text":
        for text in data:
            if not leaf.min_length <= len(text) <= leaf.max_length:
                return f"text of length {len(text)} outside {leaf.min_length}..{leaf.max_length}"
            if leaf.charset and any(ch not in leaf.charset for ch in text):
                return f"text {text[:40]!r} uses characters outside the charset"
        return None
    array = np.asarray(data)
    if leaf.kind == "box":
        low, high = leaf.bounds
        if ((array >= low) & (array <= high)).all():  # the usual case in one pass; NaN compares false, so lands below
            return None
        if array.dtype.kind == "f" and np.isnan(array).any():
            return "NaN in a Box value"
        below, above = array < low, array > high
        if below.any() or above.any():
            index = np.argwhere(below | above)[0]
            lane, element = int(index[0]), tuple(int(i) for i in index[1:])
            return (
                f"lane {lane} element {list(element)} = {array[tuple(index)]!r} outside "
                f"[{low[element]!r}, {high[element]!r}]"
            )
        return None
    if leaf.kind == "discrete":
        bad = (array < leaf.start) | (array >= leaf.start + leaf.n)
        if bad.any():
            return f"value {array[bad].ravel()[0]!r} outside Discrete [{leaf.start}, {leaf.start + leaf.n})"
        return None
    if leaf.kind == "multi_binary":
        if ((array != 0) & (array != 1)).any():
            return "MultiBinary element other than 0 or 1"
        return None
    if leaf.kind == "multi_discrete":
        nvec = np.array(leaf.nvec).reshape(leaf.shape)
        bad = (array < 0) | (array >= nvec)
        if bad.any():
            return f"MultiDiscrete element {array[bad].ravel()[0]!r} outside its nvec"
        return None
    return None


def lane_bytes(space: Space, value: Any, lanes: int, lane: int) -> bytes:
    """The bytes of one lane of a batched value (for comparing lanes across runs)."""
    parts = []
    for (_, leaf), data in zip(leaves_of(space), decode(space, value, lanes), strict=False):
        parts.append("\x00".join(data[lane]).encode() if leaf.kind == "text" else data[lane].tobytes())
    return b"\x01".join(parts)


def select_lanes(space: Space, value: Any, lanes: int, picks: list[int]) -> spaces_pb2.SpaceValue:
    """The lanes `picks` of a batched value, in that order, as a value of their own."""
    leaves = []
    for (_, leaf), data in zip(leaves_of(space), decode(space, value, lanes), strict=False):
        leaves.append(encode_text([data[i] for i in picks]) if leaf.kind == "text" else data[picks].tobytes())
    return spaces_pb2.SpaceValue(leaves=leaves)


def lane_summary(space: Space, value: Any, lanes: int, lane: int) -> str:
    """A short readable rendering of one lane's observation."""
    try:
        decoded = decode(space, value, lanes)
    except ValueMismatch as exc:
        return f"(undecodable: {exc})"
    parts = []
    for (path, _), data in list(zip(leaves_of(space), decoded, strict=False))[:6]:
        item = data[lane]
        if isinstance(item, str):
            shown = repr(item[:40])
        else:
            flat = np.asarray(item).ravel()
            shown = f"[{', '.join(_short(v) for v in flat[:4])}{', …' if flat.size > 4 else ''}]"
        parts.append(f"{path}={shown}" if path else shown)  # composite leaves are named, so a difference shows
    return " ".join(parts)


def _short(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value.item() if hasattr(value, "item") else value)


# ---------------------------------------------------------------- actions


def sample(space: Space, rng: np.random.Generator, lanes: int) -> spaces_pb2.SpaceValue:
    """A random in-space value for `lanes` lanes, encoded as wire leaves."""
    return spaces_pb2.SpaceValue(leaves=[sample_leaf(leaf, rng, lanes) for _, leaf in leaves_of(space)])


def sample_leaf(leaf: Space, rng: np.random.Generator, lanes: int) -> bytes:
    shape = (lanes, *leaf.shape)
    if leaf.kind == "text":
        charset = leaf.charset or PRINTABLE
        texts = []
        for _ in range(lanes):
            length = int(rng.integers(leaf.min_length, min(leaf.max_length, leaf.min_length + 8) + 1))
            texts.append("".join(charset[int(i)] for i in rng.integers(0, len(charset), length)))
        return encode_text(texts)
    values: np.ndarray[Any, Any]
    if leaf.kind == "discrete":
        values = rng.integers(leaf.start, leaf.start + leaf.n, size=shape)
    elif leaf.kind == "multi_binary":
        values = rng.integers(0, 2, size=shape)
    elif leaf.kind == "multi_discrete":
        values = rng.integers(0, np.array(leaf.nvec).reshape(leaf.shape), size=shape)
    elif leaf.leaf_dtype.kind == "f":
        least, most = leaf.bounds
        low = np.where(np.isfinite(least.astype(np.float64)), least, -1.0).astype(np.float64)
        high = np.where(np.isfinite(most.astype(np.float64)), most, 1.0).astype(np.float64)
        low, high = np.minimum(low, high), np.maximum(np.minimum(high, low + 2.0), low)
        values = rng.uniform(low, high, size=shape)
    elif leaf.leaf_dtype.kind == "b":
        values = rng.integers(0, 2, size=shape)
    else:
        least, most = leaf.bounds
        lows = np.maximum(least.astype(object), -(1 << 31)).astype(np.int64)
        highs = np.minimum(most.astype(object), (1 << 31)).astype(np.int64)
        values = rng.integers(lows, np.maximum(highs, lows) + 1, size=shape)
    return np.asarray(values).astype(leaf.leaf_dtype).tobytes()


def encode_text(texts: list[str]) -> bytes:
    bodies = [text.encode("utf-8") for text in texts]
    header = len(bodies).to_bytes(8, "little") + b"".join(len(b).to_bytes(8, "little") for b in bodies)
    return header + b"".join(bodies)


def out_of_domain(space: Space, lanes: int) -> spaces_pb2.SpaceValue | None:
    """An action of the right layout whose first leaf is outside the space, if one can be made."""
    leaves = leaves_of(space)
    if not leaves:
        return None
    first = leaves[0][1]
    rng = np.random.default_rng(0)
    value = sample(space, rng, lanes)
    shape = (lanes, *first.shape)
    if first.kind == "discrete":
        bad = np.full(shape, first.start + first.n)
    elif first.kind == "multi_discrete":
        bad = np.broadcast_to(np.array(first.nvec).reshape(first.shape), shape)
    elif first.kind == "box" and first.leaf_dtype.kind == "f":
        bad = np.full(shape, math.nan)
    else:
        return None
    value.leaves[0] = np.asarray(bad).astype(first.leaf_dtype).tobytes()
    return value


def wrong_dtype(space: Space, lanes: int) -> spaces_pb2.SpaceValue | None:
    """A sampled action whose first leaf is re-encoded at another width of the same kind."""
    leaves = leaves_of(space)
    if not leaves or leaves[0][1].kind == "text":
        return None
    first = leaves[0][1]
    value = sample(space, np.random.default_rng(0), lanes)
    dtype = first.leaf_dtype
    key = f"{dtype.kind}{dtype.itemsize}"
    other = np.dtype(OTHER_WIDTH.get(key, "<f8"))
    array = np.frombuffer(value.leaves[0], dtype=dtype)
    value.leaves[0] = array.astype(other).tobytes()
    return value


def is_finite(values: Any) -> bool:
    return all(math.isfinite(v) for v in values)


# ---------------------------------------------------------------- meta maps


def meta_to_python(value: spaces_pb2.MetaValue, depth: int = 0) -> Any:
    """A MetaValue as plain Python (None for an empty value), cut off below 8 levels."""
    kind = value.WhichOneof("kind")
    if kind is None or depth > 8:
        return None
    if kind == "list_value":
        return [meta_to_python(item, depth + 1) for item in value.list_value.items]
    if kind == "map_value":
        return map_to_python(value.map_value, depth + 1)
    return getattr(value, kind)


def map_to_python(meta: spaces_pb2.MetaMap, depth: int = 0) -> dict[str, Any]:
    return {key: meta_to_python(item, depth) for key, item in meta.entries.items()}
