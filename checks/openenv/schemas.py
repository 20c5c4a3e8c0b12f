"""A small JSON-schema subset: does a value validate (checks.openenv.action_values builds values).

Covers what Pydantic emits for OpenEnv models: type, enum, const, anyOf,
oneOf, allOf, local $ref, properties, required, additionalProperties, items,
prefixItems, length, item-count and numeric bounds. `pattern` and `format`
are not checked, so a hostile regular expression from a target costs nothing.
The schema comes from the target: recursion and error lists are bounded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeGuard

MAX_DEPTH = 32
MAX_ERRORS = 20

Fail = Callable[[str], None]


def is_number(value: Any) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def dict_at(node: dict[str, Any], key: str) -> dict[str, Any]:
    value = node.get(key)
    return value if isinstance(value, dict) else {}


def list_at(node: dict[str, Any], key: str) -> list[Any]:
    value = node.get(key)
    return value if isinstance(value, list) else []


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (
        not isinstance(v, bool)
        and (isinstance(v, int) or (isinstance(v, float) and math.isfinite(v) and v.is_integer()))
    ),
    "number": is_number,
}


def schema_errors(value: Any, schema: Any, root: Any = None) -> list[str]:
    """Where `value` breaks `schema`, as short path: reason strings (empty when it validates)."""
    errors: list[str] = []
    _check(value, schema, root if root is not None else schema, "$", errors, 0)
    return errors[:MAX_ERRORS]


def is_valid(value: Any, schema: Any, root: Any = None) -> bool:
    return not schema_errors(value, schema, root)


def resolve(schema: Any, root: Any) -> Any:
    """Follow a local `$ref` ("#/$defs/Name"); unknown or remote refs resolve to `{}` (anything)."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < MAX_DEPTH:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {}
        node: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, (dict, bool)):
            return {}
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {"allOf": [node, siblings]} if siblings else node
        seen += 1
    return schema


def _check(value: Any, schema: Any, root: Any, path: str, errors: list[str], depth: int) -> None:
    if len(errors) >= MAX_ERRORS:
        return
    if depth > MAX_DEPTH:
        return  # too deep to judge: give the target the benefit of the doubt
    schema = resolve(schema, root)
    if schema is False:
        errors.append(f"{path}: no value is allowed here")
        return
    if not isinstance(schema, dict):
        return

    def fail(reason: str) -> None:
        errors.append(f"{path}: {reason}")

    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_TYPE_TESTS.get(name, lambda v: True)(value) for name in names if isinstance(name, str)):
            fail(f"expected {' or '.join(map(str, names))}, got {type(value).__name__}")
            return
    _check_alternatives(value, schema, root, path, errors, depth, fail)
    _check_contents(value, schema, root, path, errors, depth, fail)


def _check_alternatives(
    value: Any, schema: dict[str, Any], root: Any, path: str, errors: list[str], depth: int, fail: Fail
) -> None:
    """enum, const, anyOf, oneOf and allOf."""
    if "enum" in schema and isinstance(schema["enum"], list) and not any(same(value, e) for e in schema["enum"]):
        fail("not one of the enum values")
    if "const" in schema and not same(value, schema["const"]):
        fail("not the const value")
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            matching = sum(1 for option in options if not schema_errors_at(value, option, root, depth))
            if matching == 0 or (keyword == "oneOf" and matching > 1):
                fail(f"matches {matching} of the {keyword} options")
    for option in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        _check(value, option, root, path, errors, depth + 1)


def _check_contents(
    value: Any, schema: dict[str, Any], root: Any, path: str, errors: list[str], depth: int, fail: Fail
) -> None:
    """The keywords of the value's own type: lengths, items, properties, numeric bounds."""
    if isinstance(value, str):
        _bounds(len(value), schema, "minLength", "maxLength", "length", fail)
    elif isinstance(value, list):
        _bounds(len(value), schema, "minItems", "maxItems", "item count", fail)
        prefix = list_at(schema, "prefixItems")
        for index, item in enumerate(value[:1000]):
            item_schema = prefix[index] if index < len(prefix) else schema.get("items", True)
            _check(item, item_schema, root, f"{path}[{index}]", errors, depth + 1)
    elif isinstance(value, dict):
        _check_object(value, schema, root, path, errors, depth, fail)
    elif _TYPE_TESTS["number"](value):
        _numeric(value, schema, fail)


def schema_errors_at(value: Any, schema: Any, root: Any, depth: int) -> list[str]:
    errors: list[str] = []
    _check(value, schema, root, "$", errors, depth + 1)
    return errors


def _check_object(
    value: dict[str, Any], schema: dict[str, Any], root: Any, path: str, errors: list[str], depth: int, fail: Fail
) -> None:
    properties = dict_at(schema, "properties")
    required = list_at(schema, "required")
    for name in required:
        if name not in value:
            fail(f"missing required {name!r}")
    additional = schema.get("additionalProperties", True)
    for key, item in list(value.items())[:1000]:
        if key in properties:
            _check(item, properties[key], root, f"{path}.{key}", errors, depth + 1)
        elif additional is False:
            fail(f"unexpected key {key!r}")
        elif isinstance(additional, dict):
            _check(item, additional, root, f"{path}.{key}", errors, depth + 1)


def _bounds(size: int, schema: dict[str, Any], low: str, high: str, what: str, fail: Fail) -> None:
    if isinstance(schema.get(low), int) and size < schema[low]:
        fail(f"{what} {size} below {low} {schema[low]}")
    if isinstance(schema.get(high), int) and size > schema[high]:
        fail(f"{what} {size} above {high} {schema[high]}")


def _numeric(value: float, schema: dict[str, Any], fail: Fail) -> None:
    def bound(name: str) -> float | None:
        b = schema.get(name)
        return b if is_number(b) else None

    if (b := bound("minimum")) is not None and value < b:
        fail(f"{value} below minimum {b}")
    if (b := bound("maximum")) is not None and value > b:
        fail(f"{value} above maximum {b}")
    if (b := bound("exclusiveMinimum")) is not None and value <= b:
        fail(f"{value} not above exclusiveMinimum {b}")
    if (b := bound("exclusiveMaximum")) is not None and value >= b:
        fail(f"{value} not below exclusiveMaximum {b}")
    if (b := bound("multipleOf")) is not None and b > 0 and math.isfinite(value):
        if abs(value / b - round(value / b)) > 1e-9:
            fail(f"{value} not a multiple of {b}")


def same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0 but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)
