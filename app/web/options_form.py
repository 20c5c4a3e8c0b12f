"""HTML form fields generated from a suite's options model JSON schema, and back.

Each property becomes one field: booleans a checkbox, numbers a number input
with the schema's bounds, enums a select, secrets (`format: password`) a
password input that is never pre-filled, lists a textarea with one item a
line, anything else a JSON textarea. Submitted strings are converted where
the type is plain; anything that does not convert is passed on as typed, so
the options model itself explains what is wrong, at `options.<field>`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PREFIX = "opt."
FieldErrors = list[dict[str, Any]]


@dataclass
class OptionField:
    name: str
    label: str
    widget: str  # checkbox, number, text, password, select, lines, json
    description: str = ""
    default: Any = None
    required: bool = False
    choices: list[str] = field(default_factory=list)
    number_type: str = ""  # integer or number, for number inputs and list items
    minimum: float | None = None
    maximum: float | None = None
    secret: bool = False  # never shown; left empty, the current value is kept

    @property
    def input_name(self) -> str:
        return PREFIX + self.name

    @property
    def step(self) -> str:
        return "1" if self.number_type == "integer" else "any"

    @property
    def default_text(self) -> str:
        return display_value(self, self.default) if self.default is not None else ""


def _resolve(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The property with `$ref`/`allOf`/`anyOf` unwrapped, and whether it may be null."""
    prop = dict(prop)
    nullable = False
    if "anyOf" in prop:
        variants = [v for v in prop["anyOf"] if v.get("type") != "null"]
        nullable = len(variants) < len(prop["anyOf"])
        if len(variants) == 1:
            prop = {**{k: v for k, v in prop.items() if k != "anyOf"}, **variants[0]}
    if "allOf" in prop and len(prop["allOf"]) == 1:
        prop = {**{k: v for k, v in prop.items() if k != "allOf"}, **prop["allOf"][0]}
    if "$ref" in prop:
        target = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
        prop = {**target, **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop, nullable


def fields_from_schema(schema: Mapping[str, Any]) -> list[OptionField]:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    fields = []
    for name, raw in schema.get("properties", {}).items():
        prop, _ = _resolve(raw, defs)
        kind = prop.get("type")
        option = OptionField(
            name=name,
            label=prop.get("title") or name.replace("_", " "),
            widget="json",
            description=prop.get("description", ""),
            default=prop.get("default"),
            required=name in required,
            secret=prop.get("format") == "password" or bool(prop.get("writeOnly")),
        )
        if "enum" in prop:
            option.widget, option.choices = "select", [str(choice) for choice in prop["enum"]]
        elif kind == "boolean":
            option.widget = "checkbox"
        elif kind in ("integer", "number"):
            option.widget, option.number_type = "number", kind
            option.minimum = prop.get("minimum", prop.get("exclusiveMinimum"))
            option.maximum = prop.get("maximum", prop.get("exclusiveMaximum"))
        elif kind == "string":
            option.widget = "password" if option.secret else "text"
        elif kind == "array" and _resolve(prop.get("items", {}), defs)[0].get("type") in (
            "string",
            "integer",
            "number",
        ):
            option.widget = "lines"
            option.number_type = _resolve(prop["items"], defs)[0]["type"]
        fields.append(option)
    return fields


def display_value(option: OptionField, value: Any) -> str:
    """The text an input shows for a stored value; secrets are never shown."""
    if value is None or option.secret:
        return ""
    if option.widget == "checkbox":
        return "true" if value else ""
    if option.widget == "lines" and isinstance(value, list):
        return "\n".join(str(item) for item in value)
    if option.widget == "json":
        return json.dumps(value)
    return str(value)


def display_values(fields: list[OptionField], options: Mapping[str, Any]) -> dict[str, str]:
    return {option.name: display_value(option, options[option.name]) for option in fields if option.name in options}


def submitted_values(fields: list[OptionField], form: Any) -> dict[str, str]:
    """The raw strings the user typed, to show again when the form comes back with errors."""
    values = {}
    for option in fields:
        entries = form.getlist(option.input_name)
        if entries:
            values[option.name] = (
                "true"
                if option.widget == "checkbox" and entries[-1] == "true"
                else ("" if option.widget in ("checkbox", "password") else entries[-1])
            )
    return values


def _number(text: str, number_type: str) -> Any:
    try:
        return int(text) if number_type == "integer" else float(text)
    except ValueError:
        return text  # the options model reports it, beside the field


def parse_options(
    fields: list[OptionField], form: Any, current: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], FieldErrors]:
    """Options from the submitted form: only what differs from the defaults is kept.

    An empty secret field keeps the current secret (the form never shows it).
    """
    current = current or {}
    options: dict[str, Any] = {}
    errors: FieldErrors = []
    for option in fields:
        entries = form.getlist(option.input_name)
        text = entries[-1].strip() if entries else ""
        if option.widget == "checkbox":
            value: Any = bool(entries) and entries[-1] == "true"
            if value != bool(option.default):
                options[option.name] = value
            continue
        if text == "":
            if option.secret and option.name in current:
                options[option.name] = current[option.name]
            continue
        if option.widget == "number":
            value = _number(text, option.number_type)
        elif option.widget == "lines":
            items = [line.strip() for line in text.splitlines() if line.strip()]
            value = [_number(item, option.number_type) for item in items] if option.number_type != "string" else items
        elif option.widget == "json":
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                errors.append({"loc": ["options", option.name], "msg": f"not valid JSON: {exc.msg}"})
                continue
        else:
            value = text
        if value != option.default or option.secret:
            options[option.name] = value
    return options, errors
