"""A small JSON-schema subset: validate a value, build a valid action and invalid variants of it.

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
UNEXPECTED_KEY = "rlconform_unexpected_key"

Fail = Callable[[str], None]


def _is_number(value: Any) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _dict_at(node: dict[str, Any], key: str) -> dict[str, Any]:
    value = node.get(key)
    return value if isinstance(value, dict) else {}


def _list_at(node: dict[str, Any], key: str) -> list[Any]:
    value = node.get(key)
    return value if isinstance(value, list) else []


def _int_at(node: dict[str, Any], key: str, default: int) -> int:
    value = node.get(key)
    return value if isinstance(value, int) else default


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
    "number": _is_number,
}


def schema_errors(value: Any, schema: Any, root: Any = None) -> list[str]:
    """Where `value` breaks `schema`, as short path: reason strings (empty when it validates)."""
    errors: list[str] = []
    _check(value, schema, root if root is not None else schema, "$", errors, 0)
    return errors[:MAX_ERRORS]


def is_valid(value: Any, schema: Any, root: Any = None) -> bool:
    return not schema_errors(value, schema, root)


def _resolve(schema: Any, root: Any) -> Any:
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
    schema = _resolve(schema, root)
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
    if "enum" in schema and isinstance(schema["enum"], list) and not any(_same(value, e) for e in schema["enum"]):
        fail("not one of the enum values")
    if "const" in schema and not _same(value, schema["const"]):
        fail("not the const value")
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            matching = sum(1 for option in options if not schema_errors_at(value, option, root, depth))
            if matching == 0 or (keyword == "oneOf" and matching > 1):
                fail(f"matches {matching} of the {keyword} options")
    for option in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        _check(value, option, root, path, errors, depth + 1)

    if isinstance(value, str):
        _bounds(len(value), schema, "minLength", "maxLength", "length", fail)
    elif isinstance(value, list):
        _bounds(len(value), schema, "minItems", "maxItems", "item count", fail)
        prefix = _list_at(schema, "prefixItems")
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
    properties = _dict_at(schema, "properties")
    required = _list_at(schema, "required")
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
        return b if _is_number(b) else None

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


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0 but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)


# ---------------------------------------------------------------- generating actions


def example_value(schema: Any, root: Any, depth: int = 0) -> Any:
    """A value that should satisfy `schema`: required members only, smallest legal sizes."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            non_null = [o for o in options if _resolve(o, root) != {"type": "null"}]
            return example_value((non_null or options)[0], root, depth + 1)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = _resolve(part, root)
            if isinstance(part, dict):
                merged.update(part)
        return example_value(merged, root, depth + 1)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object" or (kind is None and "properties" in schema):
        properties = _dict_at(schema, "properties")
        required = _list_at(schema, "required")
        return {name: example_value(properties.get(name, {}), root, depth + 1) for name in required}
    if kind == "array":
        count = _int_at(schema, "minItems", 0)
        return [example_value(schema.get("items", {}), root, depth + 1) for _ in range(min(count, 8))]
    if kind == "string":
        length = _int_at(schema, "minLength", 1)
        return "a" * max(1, min(length, 64))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        value: float = 0
        if _is_number(low):
            value = math.ceil(low) + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
        elif _is_number(high) and high < 0:
            value = math.floor(high) - 1
        return int(value)
    if kind == "boolean":
        return False
    return None


def valid_action(schema: Any) -> dict[str, Any] | None:
    """A generated action that validates against `schema`, or None when none could be built."""
    candidate = example_value(schema, schema)
    return candidate if isinstance(candidate, dict) and is_valid(candidate, schema) else None


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
    resolved = _resolve(schema, schema)
    resolved = resolved if isinstance(resolved, dict) else {}
    properties = _dict_at(resolved, "properties")
    required = [name for name in _list_at(resolved, "required") if isinstance(name, str)]
    candidates: list[tuple[str, Any]] = []
    if required:
        candidates.append((f"missing required {required[0]!r}", {k: v for k, v in base.items() if k != required[0]}))
    for name in required + [n for n in properties if n not in required]:
        field = _resolve(properties.get(name, {}), schema)
        kind = field.get("type") if isinstance(field, dict) else None
        if isinstance(kind, str) and kind in _WRONG_TYPE:
            candidates.append((f"wrong type for {name!r}", {**base, name: _WRONG_TYPE[kind]}))
            break
    for name in required + [n for n in properties if n not in required]:
        violation = _bound_violation(_resolve(properties.get(name, {}), schema))
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
        if _is_number(field.get(name)):
            value = field[name] + step
            return int(value) if field.get("type") == "integer" else value
    return None
