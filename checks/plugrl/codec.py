"""PlugRL's msgpack codec: the ndarray and npgeneric conventions, decoded strictly and boundedly.

An ndarray travels as a map with BIN keys `__ndarray__` (true), `data` (bin,
C order), `dtype` (a typestr such as `<f4`) and `shape` (array of ints); a
0-d numpy scalar as a map with bin keys `__npgeneric__`, `data` (a plain
number) and `dtype`. Message schema keys are msgpack str.

Decoding treats its input as hostile. Before msgpack builds a single object,
`scan` walks the frame's headers: every length is checked against the bytes
that are actually there, containers are bounded in nesting depth and the
whole message in object count, and extension types are refused. Arrays are
checked against their data length before numpy sees them, and are then views
on the received bytes, so a claimed shape never allocates anything. A str
longer than `STR_CAP` bytes (or past `TEXT_BUDGET` bytes of strings in one
message) is never decoded whole: its UTF-8 is checked piece by piece and it
becomes a `CutText` holding its head, so a 50 MB string costs a few KiB and
leaves the rest of the message readable. Every decoding problem raises
`CodecError` with a message that names it.

A peer sends one message shape frame after frame. A frame of the last frame's size
whose bytes outside its large bins are the last frame's is that shape again: what
`scan` found for it still holds, so it is not scanned twice.
"""

from __future__ import annotations

import codecs
import math
import re
import struct
from typing import Any, NamedTuple

import msgpack
import numpy as np

from checks.evidence import CutText
from checks.msgpack_scan import EXTENSIONS, Span, bin_header, scan
from checks.msgpack_scan import MAX_DEPTH as MAX_DEPTH
from checks.msgpack_scan import MAX_OBJECTS as MAX_OBJECTS
from checks.msgpack_scan import STR_CAP as STR_CAP
from checks.msgpack_scan import CodecError as CodecError

NDARRAY_KEY = b"__ndarray__"
NPGENERIC_KEY = b"__npgeneric__"
DATA_KEY = b"data"
DTYPE_KEY = b"dtype"
SHAPE_KEY = b"shape"

DEFAULT_MAX_FRAME = 64 * 1024 * 1024
MAX_NDIM = 32
MAX_TEXT_CHARS = 1 << 20  # the n of a `<U<n>` typestr
CUT_HEAD_BYTES = 320  # bytes of a cut str decoded for its head
_CUT_EXT = 0x63  # the ext type a cut str is swapped for, after `scan` has refused every real ext
UTF8_PIECE = 64 * 1024  # decoded and dropped one piece at a time: at most 256 KiB of str

# Kinds a PlugRL array may have; V, O and c are refused by the protocol's packer.
ALLOWED_KINDS = {"b": (1,), "u": (1, 2, 4, 8), "i": (1, 2, 4, 8), "f": (2, 4, 8), "U": None}
FORBIDDEN_KINDS = {"V": "structured", "O": "object", "c": "complex"}
TYPESTR = re.compile(r"^([<>|=])([A-Za-z])(\d{1,7})$")

# Keys of the PyPI msgpack-numpy package, a different and incompatible dialect.
MSGPACK_NUMPY_KEYS = {b"nd", "nd"}
MSGPACK_NUMPY_TYPE_KEYS = {b"type", "type"}


EVIDENCE_BYTES = 256  # of an undecodable frame, kept with its error


# ---------------------------------------------------------------- encoding


def _check_packable(dtype: np.dtype) -> None:
    if dtype.kind in FORBIDDEN_KINDS:
        raise CodecError(f"cannot pack a {FORBIDDEN_KINDS[dtype.kind]} array ({dtype.str})", "array")
    if dtype.kind not in ALLOWED_KINDS:
        raise CodecError(f"cannot pack dtype {dtype.str}: kind {dtype.kind!r} is not part of PlugRL", "array")


def _encode_extra(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        _check_packable(value.dtype)
        array = np.ascontiguousarray(value)
        return {
            NDARRAY_KEY: True,
            DATA_KEY: array.data.cast("B") if array.size else b"",
            DTYPE_KEY: array.dtype.str,
            SHAPE_KEY: list(array.shape),
        }
    if isinstance(value, np.generic):
        _check_packable(value.dtype)
        return {NPGENERIC_KEY: True, DATA_KEY: value.item(), DTYPE_KEY: value.dtype.str}
    raise TypeError(f"cannot pack {type(value).__name__}")


# Arrays of at least this many bytes are not packed by msgpack (which copies them into its buffer and
# again into the bytes it returns) but joined into the frame as they are: one copy of their data.
LARGE_ARRAY = 64 * 1024


def pack(message: Any) -> bytes:
    """One PlugRL frame: msgpack with ndarrays and numpy scalars in the bin-key convention.

    msgpack packs the message in one call, each large array's data stood in for by a placeholder;
    the frame is then that skeleton with each placeholder replaced by its array's bin: one copy of
    the arrays' data. Should the placeholder's bytes occur in the message itself, the skeleton is
    not trusted and the message is packed piece by piece instead (the same bytes, more slowly).
    """
    large: list[np.ndarray] = []

    def standing_in(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.nbytes >= LARGE_ARRAY:
            _check_packable(value.dtype)
            array = np.ascontiguousarray(value)
            large.append(array)
            # The keys in `_encode_extra`'s order, so both ways write the same bytes.
            return {NDARRAY_KEY: True, DATA_KEY: _PLACEHOLDER, DTYPE_KEY: array.dtype.str, SHAPE_KEY: list(array.shape)}
        return _encode_extra(value)

    skeleton: bytes = msgpack.packb(message, default=standing_in, use_bin_type=True)
    if not large:
        return skeleton
    pieces = skeleton.split(_PLACEHOLDER_BYTES)
    if len(pieces) != len(large) + 1:
        return _pack_piecewise(message)
    parts: list[bytes | memoryview] = [pieces[0]]
    for array, piece in zip(large, pieces[1:], strict=True):
        parts += [bin_header(array.nbytes), array.data.cast("B"), piece]
    return b"".join(parts)


# A fixext16 no frame holds: 0xd8 starts no proper suffix of it, so two occurrences never overlap, and
# counting them tells whether the skeleton holds exactly the placeholders `pack` put there.
_PLACEHOLDER = msgpack.ExtType(0x70, b"plugrl-large-bin")
_PLACEHOLDER_BYTES: bytes = msgpack.packb(_PLACEHOLDER)


def _pack_piecewise(message: Any) -> bytes:
    packer = msgpack.Packer(default=_encode_extra, use_bin_type=True)
    parts: list[bytes | memoryview] = []
    _pack_into(packer, message, parts)
    return parts[0] if len(parts) == 1 and isinstance(parts[0], bytes) else b"".join(parts)


def _pack_into(packer: msgpack.Packer, value: Any, parts: list[bytes | memoryview]) -> None:
    """Append `value`'s msgpack to `parts`: containers holding a large array piece by piece, the rest whole."""
    if isinstance(value, np.ndarray) and value.nbytes >= LARGE_ARRAY:
        _check_packable(value.dtype)
        array = np.ascontiguousarray(value)
        # The keys in `_encode_extra`'s order, so both paths write the same bytes.
        header = packer.pack_map_header(4) + packer.pack(NDARRAY_KEY) + packer.pack(True)
        header += packer.pack(DATA_KEY) + bin_header(array.nbytes)
        trailer = packer.pack(DTYPE_KEY) + packer.pack(array.dtype.str)
        trailer += packer.pack(SHAPE_KEY) + packer.pack(list(array.shape))
        parts += [header, array.data.cast("B"), trailer]
    elif isinstance(value, dict) and _holds_large_array(value):
        parts.append(packer.pack_map_header(len(value)))
        for key, item in value.items():
            parts.append(packer.pack(key))
            _pack_into(packer, item, parts)
    elif isinstance(value, list | tuple) and _holds_large_array(value):
        parts.append(packer.pack_array_header(len(value)))
        for item in value:
            _pack_into(packer, item, parts)
    else:
        parts.append(packer.pack(value))


def _holds_large_array(value: Any, depth: int = 0) -> bool:
    if isinstance(value, np.ndarray):
        return value.nbytes >= LARGE_ARRAY
    if depth > MAX_DEPTH:  # msgpack itself refuses what nests deeper
        return False
    if isinstance(value, dict):
        return any(_holds_large_array(item, depth + 1) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_large_array(item, depth + 1) for item in value)
    return False


# ---------------------------------------------------------------- decoding


def parse_typestr(typestr: Any) -> np.dtype:
    """The numpy dtype a typestr names, refusing kinds and sizes PlugRL does not use."""
    if isinstance(typestr, bytes):
        raise CodecError(f"dtype {typestr[:20]!r} is bin; a typestr is a msgpack str", "array")
    if not isinstance(typestr, str):
        raise CodecError(f"dtype is a {type(typestr).__name__}, not a typestr", "array")
    known = _PARSED.get(typestr)
    if known is not None:
        return known
    dtype = _parse_str_typestr(typestr)
    if len(_PARSED) < 256:  # the few a peer uses are remembered; a hostile stream of new ones is not
        _PARSED[typestr] = dtype
    return dtype


_PARSED: dict[str, np.dtype] = {}


def _parse_str_typestr(typestr: str) -> np.dtype:
    match = TYPESTR.match(typestr)
    if match is None:
        raise CodecError(f"dtype {typestr[:40]!r} is not a typestr like '<f4'", "array")
    _, kind, digits = match.groups()
    if kind in FORBIDDEN_KINDS:
        raise CodecError(f"dtype {typestr!r}: {FORBIDDEN_KINDS[kind]} arrays (kind {kind!r}) are forbidden", "array")
    if kind not in ALLOWED_KINDS:
        raise CodecError(f"dtype {typestr!r}: kind {kind!r} is unknown to PlugRL", "array")
    width = int(digits)
    sizes = ALLOWED_KINDS[kind]
    if (sizes is not None and width not in sizes) or (sizes is None and not 1 <= width <= MAX_TEXT_CHARS):
        raise CodecError(f"dtype {typestr!r}: no {kind!r} type is {width} wide", "array")
    try:
        return np.dtype(typestr)
    except TypeError as exc:
        raise CodecError(f"dtype {typestr!r} is not a numpy dtype: {exc}", "array") from None


def _decode_ndarray(item: dict[Any, Any]) -> np.ndarray:
    data, shape = item.get(DATA_KEY), item.get(SHAPE_KEY)
    if DTYPE_KEY not in item:
        raise CodecError("an __ndarray__ map has no dtype", "array")
    dtype = parse_typestr(item[DTYPE_KEY])
    if not isinstance(data, bytes | memoryview):
        raise CodecError(f"an __ndarray__ map's data is {type(data).__name__}, not bin", "array")
    if not isinstance(shape, list) or len(shape) > MAX_NDIM:
        raise CodecError(f"an __ndarray__ map's shape is not a list of at most {MAX_NDIM} ints", "array")
    for dim in shape:  # a loop, not all(...): this runs for every array received
        if type(dim) is not int or dim < 0:
            raise CodecError(f"an __ndarray__ shape holds something other than non-negative ints: {shape[:8]}", "array")
    expected = math.prod(shape) * dtype.itemsize  # Python ints: no overflow, no allocation
    if len(data) != expected:
        raise CodecError(
            f"ndarray data is {len(data)} bytes; shape {shape[:8]} of {dtype.str} needs {expected}", "array"
        )
    array = np.ndarray(shape, dtype, data)  # a view of the frame, its size checked above
    if not (type(data) is bytes or data.readonly):  # type: ignore[union-attr]
        array.flags.writeable = False  # read-only even where the frame was a bytearray
    if dtype.alignment > 1 and not array.flags.aligned:  # numpy would work on it, slowly: one aligned copy
        array = array.copy()
        array.flags.writeable = False
    return array


def _decode_npgeneric(item: dict[Any, Any]) -> np.generic:
    dtype = parse_typestr(item.get(DTYPE_KEY))
    value = item.get(DATA_KEY)
    if isinstance(value, bool) or type(value) in (int, float):
        try:
            scalar: np.generic = dtype.type(value)
            return scalar
        except (OverflowError, ValueError) as exc:
            raise CodecError(f"npgeneric value {value!r} does not fit {dtype.str}: {exc}", "array") from None
    raise CodecError(f"an __npgeneric__ map's data is {type(value).__name__}, not a number", "array")


def _convert(item: Any) -> Any:
    """Replace the array maps of a decoded message by numpy values (depth is bounded by `scan`);
    a large bin that is no array's data becomes bytes, as every bin is."""
    if isinstance(item, list):
        return [_convert(sub) for sub in item]
    if isinstance(item, memoryview):
        return bytes(item)
    if not isinstance(item, dict):
        return item
    if NDARRAY_KEY in item:
        return _decode_ndarray(item)
    if NPGENERIC_KEY in item:
        return _decode_npgeneric(item)
    if "__ndarray__" in item or "__npgeneric__" in item:
        raise CodecError('arrays use str keys ("__ndarray__"); the convention needs bin keys', "array")
    if MSGPACK_NUMPY_KEYS & item.keys() and MSGPACK_NUMPY_TYPE_KEYS & item.keys():
        raise CodecError("arrays in the msgpack-numpy dialect (nd/type/kind/shape keys), not __ndarray__", "array")
    return {_convert(key): _convert(value) for key, value in item.items()}


def unpack(data: bytes, max_size: int = DEFAULT_MAX_FRAME) -> dict[str, Any]:
    """Decode one PlugRL frame into a dict; arrays become read-only numpy views.

    A frame that cannot be decoded raises `CodecError` carrying the frame's first `EVIDENCE_BYTES`.
    """
    try:
        return _unpack(data, max_size)
    except CodecError as exc:
        reason, part = exc.reason, exc.part
    # Raised outside the handler, so the new error holds no context (whose traceback would keep the frame).
    raise CodecError(reason, part, data=bytes(data[:EVIDENCE_BYTES]))


def _unpack(data: bytes, max_size: int) -> dict[str, Any]:
    size = len(data)
    if size > max_size:
        raise CodecError(f"the frame is {size} bytes, over the {max_size}-byte cap")
    if data and not _starts_a_map(data[0]):
        # Refused before decoding, so a 50 MB top-level string costs nothing more.
        kind = _header_kind(data[0])
        if kind is None:
            raise CodecError(f"not msgpack: byte 0x{data[0]:02x} at offset 0 starts no object")
        raise CodecError(f"the top level is {kind}, not a map")
    frame = memoryview(data)
    layout = _last_layout
    if layout is not None and layout.fits(data):  # the same message shape as the last frame: no second scan
        views = [frame[start:end] for _, start, end in layout.views]
        payload, texts = layout.payload, []
    else:
        scanned = scan(data)
        texts = [_cut_text(data, start, end) for _, start, end in scanned.cuts]
        views = [frame[start:end] for _, start, end in scanned.views]
        swapped = [(view, _VIEW_EXT) for view in scanned.views]  # in the frame's order, as scan found them
        if scanned.cuts:
            swapped = sorted(swapped + [(cut, _CUT_EXT) for cut in scanned.cuts])
        payload = _without(data, swapped) if swapped else data
        if scanned.views and not scanned.cuts:
            _remember_layout(data, scanned.views, payload)

    def swapped_back(code: int, index: bytes) -> Any:  # scan refused every real ext: each one is a swap
        return (texts if code == _CUT_EXT else views)[_INDEX.unpack(index)[0]]

    arrays = _ArrayMaps()
    message = _decode(payload, max_size, swapped_back, arrays.convert)
    if arrays.clean and arrays.views_taken == len(views):
        return message  # type: ignore[no-any-return]
    # Something the quick way does not settle (a faulty array map, a large bin that is no array's data):
    # decoded again and converted the thorough way, which names the first fault in the message's order.
    converted: dict[str, Any] = _convert(_decode(payload, max_size, swapped_back, None))
    return converted


class _Layout(NamedTuple):
    """Where a frame's large bins lie, and its bytes around them. A peer sends the same message shape
    frame after frame (only the arrays' bytes change); a frame of the same size whose bytes outside its
    large bins are these is that shape: `scan` reads nothing else, so it would find what it found."""

    size: int
    views: list[Span]
    around: list[tuple[int, int, bytes]]  # (start, end, bytes) of each stretch between large bins
    payload: bytes  # the frame with its large bins swapped out, as `_without` made it

    def fits(self, data: bytes) -> bool:
        if len(data) != self.size:
            return False
        for start, end, kept in self.around:
            if data[start:end] != kept:
                return False
        return True


_last_layout: _Layout | None = None
_LAYOUT_BYTES = 4096  # a message whose small parts are larger is scanned every time


def _remember_layout(data: bytes, views: list[Span], payload: bytes) -> None:
    global _last_layout  # one slot, replaced whole: threads see the old layout or the new one
    if len(payload) > _LAYOUT_BYTES:
        return
    around, kept = [], 0
    for _, start, end in views:
        around.append((kept, start, bytes(data[kept:start])))
        kept = end
    around.append((kept, len(data), bytes(data[kept:])))
    _last_layout = _Layout(len(data), views, around, payload)


def _decode(payload: bytes, max_size: int, ext_hook: Any, object_hook: Any) -> Any:
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=False,
            max_bin_len=max_size,
            max_str_len=STR_CAP,  # longer ones were cut by `_unpack`
            max_array_len=MAX_OBJECTS,
            max_map_len=MAX_OBJECTS,
            max_ext_len=4,
            ext_hook=ext_hook,
            object_hook=object_hook,
        )
    except Exception as exc:  # unhashable keys, bad UTF-8, ... : all one kind of problem
        raise CodecError(f"not decodable msgpack: {type(exc).__name__}: {str(exc)[:120]}") from None


class _ArrayMaps:
    """msgpack's object_hook: array maps become numpy values as they are decoded, with no second walk.

    It settles only the common case: at the first map it is unsure of (one `_convert` refuses, or
    might), it stops converting and says so (`clean`), and the message is converted by `_convert`.
    `views_taken` counts the large bins that became arrays; any other stays a memoryview until then.
    """

    def __init__(self) -> None:
        self.clean = True
        self.views_taken = 0

    def convert(self, item: dict[Any, Any]) -> Any:
        if not self.clean or _MARKER_KEYS.isdisjoint(item):  # most maps: one set operation, done in C
            return item
        try:
            if NDARRAY_KEY in item:
                array = _decode_ndarray(item)
                self.views_taken += type(item[DATA_KEY]) is memoryview
                return array
            if NPGENERIC_KEY in item:
                return _decode_npgeneric(item)
        except CodecError:
            self.clean = False
            return item
        self.clean = False  # a str "__ndarray__" key, or maybe another array dialect: `_convert` tells
        return item


# The keys that make a map an array, or maybe a wrongly spelled one (what `_convert` looks for).
_MARKER_KEYS = frozenset({NDARRAY_KEY, NPGENERIC_KEY, "__ndarray__", "__npgeneric__", *MSGPACK_NUMPY_KEYS})


_INDEX = struct.Struct(">I")
_VIEW_EXT = 0x62  # the ext type a large bin is swapped for


def _without(data: bytes, swapped: list[tuple[tuple[int, int, int], int]]) -> bytes:
    """The frame with each swapped str or bin replaced by a fixext4 of its type holding its index (in
    the list of its type); one copy of what is kept."""
    view = memoryview(data)
    parts: list[bytes | memoryview] = []
    kept = 0
    counts = {_CUT_EXT: 0, _VIEW_EXT: 0}
    for (header, _, end), code in swapped:
        parts += [view[kept:header], bytes([0xD6, code]), _INDEX.pack(counts[code])]
        counts[code] += 1
        kept = end
    parts.append(view[kept:])
    return b"".join(parts)


def _cut_text(data: bytes, start: int, end: int) -> CutText:
    """A str too long to decode whole: its UTF-8 checked piece by piece, its head kept."""
    view = memoryview(data)[start:end]
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        for offset in range(0, len(view), UTF8_PIECE):
            decoder.decode(view[offset : offset + UTF8_PIECE])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise CodecError(f"not decodable msgpack: a {end - start}-byte str is not UTF-8: {exc.reason}") from None
    head = bytes(view[:CUT_HEAD_BYTES]).decode("utf-8", errors="ignore")
    return CutText(head, end - start)


def _starts_a_map(head: int) -> bool:
    return 0x80 <= head <= 0x8F or head in (0xDE, 0xDF)


def _header_kind(head: int) -> str | None:
    """What a msgpack object starting with this byte is, for error messages."""
    if head <= 0x7F or head >= 0xE0 or 0xCC <= head <= 0xD3:
        return "an int"
    if 0x90 <= head <= 0x9F or head in (0xDC, 0xDD):
        return "an array"
    if 0xA0 <= head <= 0xBF or head in (0xD9, 0xDA, 0xDB):
        return "a str"
    if head in (0xC4, 0xC5, 0xC6):
        return "a bin"
    if head in (0xCA, 0xCB):
        return "a float"
    if head in (0xC2, 0xC3):
        return "a bool"
    if head == 0xC0:
        return "nil"
    if head in EXTENSIONS:
        return "an extension type"
    return None  # 0xc1, never used
