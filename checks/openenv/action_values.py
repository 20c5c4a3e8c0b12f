"""Building actions from /schema.action: a valid one, one per advertised property, and invalid variants.

A value is built only where the suite is sure it is valid: a string format it
does not know, or a pattern none of its candidates matches, makes the member
`Unbuildable` rather than guessed, since sending a guess and blaming the
server for refusing it would fail a conforming server.
"""

from __future__ import annotations

import math
import re
from typing import Any

from checks.errors import CheckError
from checks.openenv.schemas import dict_at, is_number, is_valid, list_at, resolve, same

UNEXPECTED_KEY = "rlconform_unexpected_key"
MAX_PROPERTIES = 64  # the schema comes from the target: bound the sessions its size costs
MAX_PATTERN = 200
NOTHING: Any = object()  # no value to avoid

# A value each format admits under JSON Schema and under Pydantic (which emits these formats).
FORMAT_EXAMPLES = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05",
    "duration": "PT1S",
    "email": "someone@example.com",
    "idn-email": "someone@example.com",
    "uri": "https://example.com/path",
    "iri": "https://example.com/path",
    "uri-reference": "https://example.com/path",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "ipvanyaddress": "192.0.2.1",
    "ipv4network": "192.0.2.0/24",
    "ipv6network": "2001:db8::/32",
    "ipvanynetwork": "192.0.2.0/24",
    "ipv4interface": "192.0.2.1/24",
    "ipv6interface": "2001:db8::1/32",
    "ipvanyinterface": "192.0.2.1/24",
    "uuid": "12345678-1234-4678-9234-567812345678",
    "uuid1": "12345678-1234-1678-9234-567812345678",
    "uuid3": "12345678-1234-3678-9234-567812345678",
    "uuid4": "12345678-1234-4678-9234-567812345678",
    "uuid5": "12345678-1234-5678-9234-567812345678",
    "binary": "abc",
    "base64": "YWJj",
    "base64url": "YWJj",
    "password": "secret",
    "json-string": "{}",
    "path": "a",
}
PATTERN_CANDIDATES = ("a", "A", "0", "a0", "abc", "ABC", "123", "a_b", "a-b", "a.b", "2024-01-02", "")


class Unbuildable(CheckError):
    """No value of this schema can be built with confidence (a format or pattern the suite cannot satisfy).

    A domain condition of the harness, not a transport error: the caller leaves the property out."""


def example_value(schema: Any, root: Any, depth: int = 0, *, full: bool = False, avoid: Any = NOTHING) -> Any:
    """A value that satisfies `schema`, smallest legal sizes, different from `avoid` where the schema allows.

    Without `full`: required members only, and a best guess where a format or
    pattern is unknown. With `full`: every member the schema advertises, and
    `Unbuildable` instead of a guess (an optional member that cannot be built
    is left out).
    """
    schema = resolve(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _pick(schema["enum"], schema, root, avoid)
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return _pick(schema["examples"], schema, root, avoid)
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            return _from_options(options, schema, root, depth, full, avoid)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = resolve(part, root)
            if isinstance(part, dict):
                merged.update(part)
        return example_value(merged, root, depth + 1, full=full, avoid=avoid)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, root, depth, full)
    if kind == "array":
        return _array(schema, root, depth, full)
    if kind == "string":
        return _string(schema, full, avoid)
    if kind in ("integer", "number"):
        return _number(schema, avoid)
    if kind == "boolean":
        return avoid is False
    return None


def _int_at(node: dict[str, Any], key: str, default: int) -> int:
    value = node.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _pick(values: list[Any], schema: dict[str, Any], root: Any, avoid: Any) -> Any:
    fitting = [v for v in values if is_valid(v, schema, root)] or values
    return next((v for v in fitting if avoid is NOTHING or not same(v, avoid)), fitting[0])


def _from_options(options: list[Any], schema: dict[str, Any], root: Any, depth: int, full: bool, avoid: Any) -> Any:
    non_null = [o for o in options if resolve(o, root) != {"type": "null"}]
    failure: Unbuildable | None = None
    for option in non_null or options:
        try:
            value = example_value(option, root, depth + 1, full=full, avoid=avoid)
        except Unbuildable as exc:
            failure = exc
            continue
        if not full or is_valid(value, schema, root):
            return value
    raise failure or Unbuildable("no option of the anyOf or oneOf could be built")


def _object(schema: dict[str, Any], root: Any, depth: int, full: bool) -> dict[str, Any]:
    properties = dict_at(schema, "properties")
    required = [name for name in list_at(schema, "required") if isinstance(name, str)]
    names = required + [name for name in properties if name not in required] if full else required
    value: dict[str, Any] = {}
    for name in names:
        try:
            value[name] = example_value(properties.get(name, {}), root, depth + 1, full=full)
        except Unbuildable:
            if name in required:
                raise
    return value


def _array(schema: dict[str, Any], root: Any, depth: int, full: bool) -> list[Any]:
    count, most = _int_at(schema, "minItems", 0), _int_at(schema, "maxItems", 8)
    if full and count == 0 and most > 0:
        try:
            return [example_value(schema.get("items", {}), root, depth + 1, full=True)]
        except Unbuildable:
            return []
    return [example_value(schema.get("items", {}), root, depth + 1, full=full) for _ in range(min(count, 8))]


def _string(schema: dict[str, Any], full: bool, avoid: Any) -> str:
    shortest, longest = _int_at(schema, "minLength", 1), _int_at(schema, "maxLength", 64)
    length = max(0, min(max(1, shortest), longest, 64))
    fmt = schema.get("format")
    if isinstance(fmt, str):
        if fmt in FORMAT_EXAMPLES:
            return FORMAT_EXAMPLES[fmt]
        if full:
            raise Unbuildable(f"no value is known for string format {fmt!r}")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        matching = _matching(pattern)
        if matching is not None:
            return matching
        if full:
            raise Unbuildable(f"no candidate matches the pattern {pattern[:80]!r}")
    plain = "a" * length
    return "b" * length if plain == avoid and length else plain


def _matching(pattern: str) -> str | None:
    """A short candidate the pattern matches; short candidates keep a hostile pattern cheap."""
    if len(pattern) > MAX_PATTERN:
        return None
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    return next((c for c in PATTERN_CANDIDATES if compiled.search(c)), None)


def _number(schema: dict[str, Any], avoid: Any) -> float:
    low = next((schema[k] for k in ("minimum", "exclusiveMinimum") if is_number(schema.get(k))), None)
    high = next((schema[k] for k in ("maximum", "exclusiveMaximum") if is_number(schema.get(k))), None)
    multiple = schema.get("multipleOf")
    step: float = multiple if is_number(multiple) and multiple > 0 else 1
    candidates: list[float] = [0]
    if low is not None:
        start = math.ceil(low / step) * step
        candidates = [start, start + step]
    elif high is not None:
        start = math.floor(high / step) * step
        candidates = [start, start - step]
    if low is not None and high is not None:
        candidates += [(low + high) / 2, low + (high - low) / 4]
    candidates.append(candidates[0] + step)
    candidates = [int(c) if float(c).is_integer() else c for c in candidates]
    valid = [c for c in candidates if is_valid(c, schema)] or candidates
    return next((c for c in valid if avoid is NOTHING or not same(c, avoid)), valid[0])


def valid_action(schema: Any) -> dict[str, Any] | None:
    """A generated action that validates against `schema`, or None when none could be built."""
    candidate = example_value(schema, schema)
    return candidate if isinstance(candidate, dict) and is_valid(candidate, schema) else None


def property_actions(schema: Any, base: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """For each property /schema.action advertises, `base` with that property set to a valid value.

    The value differs from the base's (or the property's default) where the
    schema allows, so each property is exercised. Returns the (property,
    action) pairs and, for properties no sure value could be built for, why.
    """
    resolved = resolve(schema, schema)
    properties = dict_at(resolved, "properties") if isinstance(resolved, dict) else {}
    actions: list[tuple[str, dict[str, Any]]] = []
    skipped: list[str] = []
    for name, field in list(properties.items())[:MAX_PROPERTIES]:
        default = field.get("default", NOTHING) if isinstance(field, dict) else NOTHING
        try:
            value = example_value(field, schema, 1, full=True, avoid=base.get(name, default))
        except Unbuildable as exc:
            skipped.append(f"{name!r}: {exc}")
            continue
        action = {**base, name: value}
        if is_valid(action, schema):
            actions.append((name, action))
        else:
            skipped.append(f"{name!r}: no value valid by /schema.action could be built")
    return actions, skipped


_WRONG_TYPE = {
    "string": 0,
    "integer": "not-a-number",
    "number": "not-a-number",
    "boolean": "maybe",
    "object": "not-an-object",
    "array": "not-an-array",
}


def invalid_actions(schema: Any, base: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, action) pairs that break `schema`, each checked to be invalid here first.

    A missing required member, a wrong type, a bound violation, an unexpected
    key when extra keys are forbidden, and step data that is not an object.
    """
    resolved = resolve(schema, schema)
    resolved = resolved if isinstance(resolved, dict) else {}
    properties = dict_at(resolved, "properties")
    required = [name for name in list_at(resolved, "required") if isinstance(name, str)]
    candidates: list[tuple[str, Any]] = []
    if required:
        candidates.append((f"missing required {required[0]!r}", {k: v for k, v in base.items() if k != required[0]}))
    for name in required + [n for n in properties if n not in required]:
        field = resolve(properties.get(name, {}), schema)
        kind = field.get("type") if isinstance(field, dict) else None
        if isinstance(kind, str) and kind in _WRONG_TYPE:
            candidates.append((f"wrong type for {name!r}", {**base, name: _WRONG_TYPE[kind]}))
            break
    for name in required + [n for n in properties if n not in required]:
        violation = _bound_violation(resolve(properties.get(name, {}), schema))
        if violation is not None:
            candidates.append((f"bound broken for {name!r}", {**base, name: violation}))
            break
    if resolved.get("additionalProperties") is False:
        candidates.append(("unexpected key", {**base, UNEXPECTED_KEY: 1}))
    candidates.append(("step data not an object", ["not", "an", "object"]))
    return [(label, action) for label, action in candidates if not is_valid(action, schema)]


def _bound_violation(field: Any) -> Any:
    if not isinstance(field, dict):
        return None
    if isinstance(field.get("enum"), list) and all(isinstance(e, str) for e in field["enum"]):
        return "rlconform-not-in-enum"
    if isinstance(field.get("minLength"), int) and field["minLength"] > 0:
        return ""
    if isinstance(field.get("maxLength"), int):
        return "a" * (field["maxLength"] + 1)
    for name, step in (("minimum", -1), ("exclusiveMinimum", 0), ("maximum", 1), ("exclusiveMaximum", 0)):
        if is_number(field.get(name)):
            value = field[name] + step
            return int(value) if field.get("type") == "integer" else value
    return None
