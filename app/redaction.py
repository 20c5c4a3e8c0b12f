"""Secrets kept out of what is shown and stored: secret options, passwords in URLs, and evidence scrubbed of both."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import pydantic

from checks.registry import find_suite

REDACTED = "**********"
MIN_SCRUBBED = 3  # secret values shorter than this are not scrubbed from evidence: they would mask ordinary text

Data = TypeVar("Data")


# ---------------------------------------------------------------- secret options


def _is_secret(annotation: Any) -> bool:
    if annotation in (pydantic.SecretStr, pydantic.SecretBytes):
        return True
    return any(_is_secret(arg) for arg in getattr(annotation, "__args__", ()) or ())


def secret_fields(options_model: type[pydantic.BaseModel]) -> set[str]:
    return {name for name, field in options_model.model_fields.items() if _is_secret(field.annotation)}


def redact_options(kind: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of `options` with every secret field of the kind's options model masked.

    For a kind this server cannot load (its package missing, or renamed in an upgrade)
    nobody can tell which options are secret, so every value is masked.
    """
    redacted = dict(options or {})
    suite = find_suite(kind)
    if suite is None:
        return {name: REDACTED if value not in (None, "") else value for name, value in redacted.items()}
    for name in secret_fields(suite.options_model):
        if redacted.get(name) not in (None, ""):
            redacted[name] = REDACTED
    return redacted


def secret_values(options_model: type[pydantic.BaseModel], options: pydantic.BaseModel) -> list[str]:
    """The values of the secret fields of `options` worth scrubbing from evidence (very short ones are left)."""
    values = []
    for name in secret_fields(options_model):
        value = getattr(options, name, None)
        secret = value.get_secret_value() if value is not None else ""
        secret = secret.decode(errors="replace") if isinstance(secret, bytes) else str(secret)
        if len(secret) >= MIN_SCRUBBED:
            values.append(secret)
    return values


# ---------------------------------------------------------------- passwords in URLs


def redact_url(url: str) -> str:
    """`url` with the password of its user info (`ws://user:pass@host`) masked, for display and export."""
    parts = urlsplit(url)
    if not parts.netloc or "@" not in parts.netloc:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    if ":" not in userinfo:
        return url
    return urlunsplit(parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:{REDACTED}@{host}"))


def url_password(url: str) -> str:
    """The password in `url`'s user info, or ""."""
    return (urlsplit(url).password or "") if "@" in url else ""


def unmask_url(shown: str, stored: str) -> str:
    """`shown` (a URL as displayed) with the password of `stored` when it is `stored` redacted, else itself."""
    return stored if shown != stored and redact_url(stored) == shown else shown


# ---------------------------------------------------------------- evidence


def scrub(data: Data, secrets: Sequence[str]) -> Data:
    """`data` with every occurrence of a secret value masked, so evidence never stores credentials."""
    scrubbed: Any = data
    if isinstance(data, str):
        for secret in secrets:
            scrubbed = scrubbed.replace(secret, REDACTED)
    elif isinstance(data, dict):
        scrubbed = {key: scrub(value, secrets) for key, value in data.items()}
    elif isinstance(data, list):
        scrubbed = [scrub(value, secrets) for value in data]
    return cast(Data, scrubbed)
