"""Credentials and transport options shared by every HTTP and WebSocket kind.

A suite's options model mixes `HttpOptions` in; its clients take their
headers and TLS settings from here, so a key, a header or a CA bundle set
once in the form reaches every request the suite makes.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import pydantic


class TransportOptions(pydantic.BaseModel):
    """Extra headers and TLS settings of a target reached over HTTP(S) or WS(S)."""

    extra_headers: dict[str, str] = pydantic.Field(
        default_factory=dict,
        description='Headers added to every request, e.g. {"OpenAI-Organization": "org-1"}; masked like a key.',
        json_schema_extra={"writeOnly": True},  # often a credential: never shown back (app.redaction)
    )
    verify_tls: bool = pydantic.Field(True, description="Verify the target's TLS certificate (https/wss).")
    ca_bundle: str | None = pydantic.Field(
        None, description="Path of a PEM CA bundle to verify the target's certificate with, instead of the system's."
    )

    @pydantic.field_validator("extra_headers")
    @classmethod
    def _header_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not name or any(c in name for c in " :\r\n") or any(c in text for c in "\r\n"):
                raise ValueError(f"not a usable header: {name!r}")
        return value

    def request_headers(self) -> dict[str, str]:
        return dict(self.extra_headers)

    def tls_verify(self) -> bool | ssl.SSLContext:
        """What httpx (or an ssl-aware WebSocket client) verifies the target with."""
        if not self.verify_tls:
            return False
        if self.ca_bundle:
            if not Path(self.ca_bundle).is_file():
                raise ValueError(f"ca_bundle {self.ca_bundle} is not a readable file")
            return ssl.create_default_context(cafile=self.ca_bundle)
        return True

    def websocket_ssl(self, url: str) -> ssl.SSLContext | None:
        """The TLS context for a wss:// URL (None for ws://, where websockets refuses one)."""
        if not url.startswith("wss://"):
            return None
        verify = self.tls_verify()
        if isinstance(verify, ssl.SSLContext):
            return verify
        context = ssl.create_default_context()
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context


class HttpOptions(TransportOptions):
    """The API key (a bearer token), extra headers and TLS settings of an HTTP(S) or WS(S) target."""

    api_key: pydantic.SecretStr | None = pydantic.Field(
        None, description="Sent as 'Authorization: Bearer <key>' with every request."
    )

    def request_headers(self) -> dict[str, str]:
        """Extra headers first, then the bearer key, which wins over an extra `Authorization`."""
        headers = dict(self.extra_headers)
        if self.api_key is not None and self.api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {self.api_key.get_secret_value()}"
        return headers
