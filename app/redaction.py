"""Secrets kept out of what is shown and stored: secret options, passwords in URLs, and evidence scrubbed of both."""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Any, TypeVar, cast
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

import pydantic

from checks.registry import find_suite

REDACTED = "**********"
# A secret this short is scrubbed only where it stands alone (`u:p@`), not inside a word (`pass`);
# a longer one wherever it appears.
SHORT_SECRET = 8
# Fields of results and transcripts that name a clause, a verdict or a direction: never scrubbed, a
# secret spelt like one (`pass`) must not corrupt the record. Every other string is free text.
STRUCTURED_FIELDS = frozenset(
    {"clause_id", "level", "verdict", "phase", "direction", "kind", "status", "closed_by", "format", "version"}
)

Data = TypeVar("Data")


# ---------------------------------------------------------------- secret options


def _is_secret(annotation: Any) -> bool:
    if annotation in (pydantic.SecretStr, pydantic.SecretBytes):
        return True
    return any(_is_secret(arg) for arg in getattr(annotation, "__args__", ()) or ())


def _write_only(field: pydantic.fields.FieldInfo) -> bool:
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get("writeOnly") is True


def secret_fields(options_model: type[pydantic.BaseModel]) -> set[str]:
    """Options masked wherever shown: SecretStr ones, and those marked `writeOnly` (`extra_headers`)."""
    return {
        name for name, field in options_model.model_fields.items() if _is_secret(field.annotation) or _write_only(field)
    }


EMPTY: tuple[Any, ...] = (None, "", {})  # nothing to hide: shown as it is


def redact_options(kind: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of `options` with every secret field of the kind's options model masked.

    For a kind this server cannot load (its package missing, or renamed in an upgrade)
    nobody can tell which options are secret, so every value is masked.
    """
    redacted = dict(options or {})
    suite = find_suite(kind)
    if suite is None:
        return {name: REDACTED if value not in EMPTY else value for name, value in redacted.items()}
    for name in secret_fields(suite.options_model):
        if redacted.get(name) not in EMPTY:
            redacted[name] = REDACTED
    return redacted


def secret_values(options_model: type[pydantic.BaseModel], options: pydantic.BaseModel) -> list[str]:
    """The values of the secret fields of `options`, to scrub from evidence."""
    values = []
    for name in secret_fields(options_model):
        value = getattr(options, name, None)
        if isinstance(value, dict):  # extra headers: each value is a credential
            values += [str(text) for text in value.values() if text]
            continue
        secret = value.get_secret_value() if value is not None else ""
        secret = secret.decode(errors="replace") if isinstance(secret, bytes) else str(secret)
        if secret:
            values.append(secret)
    return values


# ---------------------------------------------------------------- passwords in URLs


# Query parameters that carry credentials (`?api_key=…`): their values are masked like a password.
QUERY_SECRETS = frozenset({"api_key", "key", "token", "access_token", "password", "secret", "sig"})


def _query_secret_values(query: str) -> list[str]:
    """The raw values of the credential parameters of a query string."""
    values = []
    for piece in query.split("&"):
        name, sep, value = piece.partition("=")
        if sep and value and unquote_plus(name).lower() in QUERY_SECRETS:
            values.append(value)
    return values


def _redact_query(query: str) -> str:
    pieces = []
    for piece in query.split("&"):
        name, sep, value = piece.partition("=")
        secret = sep and value and unquote_plus(name).lower() in QUERY_SECRETS
        pieces.append(f"{name}={REDACTED}" if secret else piece)
    return "&".join(pieces)


def redact_url(url: str) -> str:
    """`url` with the password of its user info (`ws://user:pass@host`) and credential query parameters
    (`?api_key=…`, QUERY_SECRETS) masked, for display, export and storage."""
    parts = urlsplit(url)
    if not parts.netloc:
        return url
    if parts.query:
        parts = parts._replace(query=_redact_query(parts.query))
    userinfo, at, host = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        parts = parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:{REDACTED}@{host}")
    redacted = urlunsplit(parts)
    return url if redacted == urlunsplit(urlsplit(url)) else redacted


def mask_secret_url(url: str) -> str:
    """A URL that is a secret as a whole (a webhook's path is its key): scheme and host, the rest masked."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    if not parts.scheme or not host:
        return REDACTED
    rest = parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc
    return f"{parts.scheme}://{host}/{REDACTED if rest else ''}"


URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
QUERY_SECRET_IN_TEXT = re.compile(r"([?&](?:" + "|".join(sorted(QUERY_SECRETS)) + r")=)[^&\s\"'#]+", re.IGNORECASE)


def redact_text(text: str) -> str:
    """`text` (a log line) with every URL in it redacted, and credential parameters of bare paths too."""
    text = URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)
    return QUERY_SECRET_IN_TEXT.sub(lambda match: match.group(1) + REDACTED, text)


def url_secrets(url: str) -> list[str]:
    """What of `url` a server could echo that is a credential: query credentials, the user info's
    password as written and decoded, and the `Authorization: Basic` built from it (base64 of `user:password`)."""
    parts = urlsplit(url)
    found = [value for raw in _query_secret_values(parts.query) for value in (raw, unquote_plus(raw))]
    if "@" in parts.netloc and parts.password is not None:
        user, password = unquote(parts.username or ""), unquote(parts.password)
        found += [parts.password, password, base64.b64encode(f"{user}:{password}".encode()).decode()]
    return [value for value in dict.fromkeys(found) if value]


def unmask_url(shown: str, stored: str) -> str:
    """`shown` (a URL as displayed) with the password of `stored` when it is `stored` redacted, else itself."""
    return stored if shown != stored and redact_url(stored) == shown else shown


# ---------------------------------------------------------------- evidence


def _secret_pattern(secrets: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern matching each whole secret, longest first (so a secret containing another goes whole)."""
    alternatives = []
    for secret in sorted(set(filter(None, secrets)), key=len, reverse=True):
        escaped = re.escape(secret)
        alternatives.append(escaped if len(secret) >= SHORT_SECRET else rf"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])")
    return re.compile("|".join(alternatives)) if alternatives else None


def _scrub(data: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(data, str):
        return pattern.sub(REDACTED, data)
    if isinstance(data, dict):
        return {key: value if key in STRUCTURED_FIELDS else _scrub(value, pattern) for key, value in data.items()}
    if isinstance(data, list):
        return [_scrub(value, pattern) for value in data]
    return data


def scrub(data: Data, secrets: Sequence[str]) -> Data:
    """`data` with every secret value masked in its free text, so evidence never stores credentials.

    Structured fields (a verdict, a clause id: STRUCTURED_FIELDS) are left as they are.
    """
    pattern = _secret_pattern(secrets)
    return data if pattern is None else cast(Data, _scrub(data, pattern))
