"""The kinds a tap can watch and the options each takes: each kind's record names its builder here (`tap`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import pydantic

from checks.registry import find_record, kinds_with, load_part
from checks.tap.spec import TapSpec

M = TypeVar("M", bound=pydantic.BaseModel)


def plugrl_tap(options: Mapping[str, str]) -> TapSpec:
    from checks.tap import plugrl

    _no_options("plugrl-server", options)
    return plugrl.spec()


def openai_tap(options: Mapping[str, str]) -> TapSpec:
    from checks.openai.options import PRESETS
    from checks.tap import openai

    unknown = set(options) - {"preset"}
    if unknown:
        raise ValueError(f"openai-chat's tap takes only the option preset, not {', '.join(sorted(unknown))}")
    preset = options.get("preset", "strict-openai")
    if preset not in PRESETS:
        raise ValueError(f"preset {preset!r}: one of {', '.join(PRESETS)}")
    return openai.spec(preset)


def openenv_tap(options: Mapping[str, str]) -> TapSpec:
    from checks.openenv.options import OpenEnvOptions
    from checks.tap import openenv

    return openenv.spec(model_options("openenv", OpenEnvOptions, openenv.TAKES, options))


def rllink_tap(options: Mapping[str, str]) -> TapSpec:
    from checks.rllink.options import RLlinkOptions
    from checks.tap import rllink

    return rllink.spec(model_options("rllink", RLlinkOptions, rllink.TAKES, options))


def session_tap(options: Mapping[str, str]) -> TapSpec:
    from checks.tap import session

    _no_options("session-server", options)
    return session.spec()


def ors_tap(options: Mapping[str, str]) -> TapSpec:
    from checks.tap import ors

    _no_options("ors", options)
    return ors.spec()


def model_options(kind: str, model: type[M], takes: Iterable[str], options: Mapping[str, str]) -> M:
    """The suite's options model from the tap's `--option key=value` (each value JSON, or a bare string)."""
    unknown = set(options) - set(takes)
    if unknown:
        raise ValueError(f"{kind}'s tap takes only {', '.join(sorted(takes))}, not {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for key, text in options.items():
        try:
            values[key] = json.loads(text)
        except ValueError:
            values[key] = text
    try:
        return model.model_validate(values)
    except pydantic.ValidationError as exc:
        raise ValueError(f"{kind}'s tap options: {exc.errors()[0]['msg']}") from None


def _no_options(kind: str, options: Mapping[str, str]) -> None:
    if options:
        raise ValueError(f"{kind}'s tap takes no options")


# The kinds with a tap, as the records say. PlugRL's tap judges the server's and the client's rules at once.
TAP_KINDS: tuple[str, ...] = tuple(kinds_with("tap"))


def tapped_kind(kind: str) -> str:
    """The registry's name of the kind a tap of `kind` (a full or short name) watches; ValueError without a tap."""
    # A short name shared by a server and a client kind (plugrl) means the server: a tap's upstream is one.
    tapped = [name for name in TAP_KINDS if kind in find_record(name).names()]
    try:
        name = tapped[0] if tapped else find_record(kind).name
    except LookupError as exc:
        raise ValueError(str(exc)) from None
    if name not in TAP_KINDS:
        raise ValueError(f"{name} has no tap yet; taps: {', '.join(TAP_KINDS)}")
    return name


def tap_spec(kind: str, options: Mapping[str, str]) -> TapSpec:
    """The tap for `kind` (a full or short name, e.g. plugrl or openai); ValueError when it has none."""
    name = tapped_kind(kind)
    origin = (name, tuple(sorted((str(key), str(value)) for key, value in options.items())))
    build = load_part(name, "tap")
    if not callable(build):
        raise TypeError(f"the tap of {name} is not callable")
    spec = build(options)
    if not isinstance(spec, TapSpec):
        raise TypeError(f"the tap of {name} made {type(spec).__name__}, not a TapSpec")
    return dataclasses.replace(spec, origin=origin)
