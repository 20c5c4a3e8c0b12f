"""Tool inputs made from a ToolSpec's input_schema, deterministically (nothing random).

`plain_input` fills the required properties with the plainest values the schema
allows: a const, else a default, else the first enum value, else the smallest
value of the type within minimum/maximum and minLength/minItems. `sized_input`
is the same with every string and integer as large as the schema lets it be (up
to `SIZED`): the input most likely to make a tool answer over 4 KB (an echo, a
dump); numbers stay small, as they are often durations. `breaking_input` gives
one required property a value of the wrong type. `$ref`s into the schema's own
`$defs`/`definitions` (Pydantic writes them for nested models) are followed.
"""

from __future__ import annotations

from typing import Any

SIZED = 16_000  # characters or units: several of the 4096-character chunks both real servers cut at
DEPTH = 8  # nested objects and refs followed at most (a recursive schema ends here)
FORMATS = {
    "date-time": "2000-01-01T00:00:00Z",
    "date": "2000-01-01",
    "time": "00:00:00",
    "email": "a@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
WRONG_TYPE = {
    "string": {"not": "a string"},
    "integer": "seven",
    "number": "seven",
    "boolean": "maybe",
    "array": "not an array",
    "object": "not an object",
}


def plain_input(schema: Any) -> dict[str, Any]:
    """An input satisfying an object schema's required properties with the plainest values."""
    made = _object(schema, schema, sized=False, depth=0)
    return made if isinstance(made, dict) else {}


def sized_input(schema: Any) -> dict[str, Any] | None:
    """The plain input with strings and integers as large as allowed, or None when it is the plain one."""
    made = _object(schema, schema, sized=True, depth=0)
    return made if isinstance(made, dict) and made != plain_input(schema) else None


def breaking_input(schema: Any) -> dict[str, Any] | None:
    """An input the schema refuses (a required property of the wrong type), or None when none is known."""
    if not isinstance(schema, dict):
        return None
    properties = _properties(schema, schema)
    for name in _required(schema):
        prop = _resolve(properties.get(name), schema, 0)
        kind = _type_of(prop)
        if isinstance(prop.get("enum"), list) and all(isinstance(v, str) for v in prop["enum"]):
            return {**plain_input(schema), name: "zz-not-one-of-the-enum"}
        if kind in WRONG_TYPE and not _any_of(prop):
            return {**plain_input(schema), name: WRONG_TYPE[kind]}
    return None


def _resolve(schema: Any, root: Any, depth: int) -> dict[str, Any]:
    """`schema` with a local `$ref` followed (and allOf merged); {} for what is not a schema object."""
    for _ in range(DEPTH - depth):
        if not isinstance(schema, dict):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for part in ref[2:].split("/"):
                target = target.get(part) if isinstance(target, dict) else None
            schema = {
                **{k: v for k, v in schema.items() if k != "$ref"},
                **(target if isinstance(target, dict) else {}),
            }
            continue
        if isinstance(schema.get("allOf"), list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged = {**_resolve(part, root, depth + 1), **merged}
            return merged
        return schema
    return {}


def _properties(schema: dict[str, Any], root: Any) -> dict[str, Any]:
    properties = _resolve(schema, root, 0).get("properties")
    return properties if isinstance(properties, dict) else {}


def _required(schema: dict[str, Any]) -> list[str]:
    required = schema.get("required")
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def _any_of(schema: dict[str, Any]) -> list[Any]:
    branches = schema.get("anyOf") or schema.get("oneOf")
    return branches if isinstance(branches, list) else []


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first type that is not null
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and isinstance(schema.get("properties"), dict):
        kind = "object"
    return kind if isinstance(kind, str) else ""


def _object(schema: Any, root: Any, *, sized: bool, depth: int) -> dict[str, Any]:
    schema = _resolve(schema, root, depth)
    properties = _properties(schema, root)
    return {name: _value(properties.get(name), root, sized=sized, depth=depth + 1) for name in _required(schema)}


def _value(schema: Any, root: Any, *, sized: bool, depth: int) -> Any:
    schema = _resolve(schema, root, depth)
    if depth >= DEPTH:
        return None
    if "const" in schema:
        return schema["const"]
    if "default" in schema and not (sized and _type_of(schema) in ("string", "integer")):
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    branches = [b for b in _any_of(schema) if _type_of(_resolve(b, root, depth)) != "null"]
    if branches:
        return _value(branches[0], root, sized=sized, depth=depth + 1)
    return _typed(schema, root, sized=sized, depth=depth)


def _typed(schema: dict[str, Any], root: Any, *, sized: bool, depth: int) -> Any:
    kind = _type_of(schema)
    if kind == "string":
        return _string(schema, sized)
    if kind in ("integer", "number"):
        return _number(schema, sized=sized and kind == "integer", integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "array":
        least = _count(schema, "minItems", 0)
        return [_value(schema.get("items"), root, sized=sized, depth=depth + 1) for _ in range(least)]
    if kind == "object":
        return _object(schema, root, sized=sized, depth=depth)
    if kind == "null":
        return None
    return ""


def _string(schema: dict[str, Any], sized: bool) -> str:
    least, most = _count(schema, "minLength", 0), _count(schema, "maxLength", None)
    text = FORMATS.get(str(schema.get("format")), "")
    length = max(least, len(text))
    if sized:
        length = max(length, SIZED if most is None else min(most, SIZED))
    return (text + "a" * length)[:length] if length > len(text) else text


def _count(schema: dict[str, Any], key: str, absent: int | None) -> Any:
    """A whole-number keyword (minLength, maxItems, ...), bounded to SIZED; `absent` when not one."""
    value = schema.get(key)
    return min(value, SIZED) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else absent


def _number(schema: dict[str, Any], *, sized: bool, integer: bool) -> int | float:
    low, high = _bound(schema, "minimum", "exclusiveMinimum", 1), _bound(schema, "maximum", "exclusiveMaximum", -1)
    value: float = SIZED if sized else 0
    if low is not None:
        value = max(value, low)
    if high is not None:
        value = min(value, high)
    return int(value) if integer else float(value)


def _bound(schema: dict[str, Any], inclusive: str, exclusive: str, step: int) -> float | None:
    """The inclusive bound a schema sets (an exclusive one moved one unit inward), or None."""
    bound = schema.get(inclusive)
    beyond = schema.get(exclusive)
    if isinstance(beyond, bool):  # draft 4: a flag on the inclusive keyword
        return bound + step if beyond and isinstance(bound, (int, float)) else bound
    if isinstance(beyond, (int, float)):
        return beyond + step
    return bound if isinstance(bound, (int, float)) and not isinstance(bound, bool) else None
