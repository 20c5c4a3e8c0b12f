"""Broken PlugRL env clients, connection lifecycle (SPEC 7): stops, resyncs and text frames."""

from __future__ import annotations

from websockets.asyncio.client import ClientConnection

from checks.plugrl_client.reference import ReferenceClient


class ResendsFeedback(ReferenceClient):
    """Resends its held feedback after reconnecting (plugrl-env-client's --reconnect-on-server-stop gap)."""

    async def on_reconnect(self, ws: ClientConnection) -> None:
        """Keeps the feedback of the last action, sent or not: the bug."""
        self.held_feedback = self.held_feedback or self.last_feedback


class IgnoresStop(ReferenceClient):
    """Reconnects after plugrl-server-stop as after any close."""

    def on_close(self, reason: str) -> str:
        return "reconnect"


class ExitsOnResync(ReferenceClient):
    """Treats every close as the end: never reconnects after a resync."""

    def on_close(self, reason: str) -> str:
        return "exit"


class IgnoresText(ReferenceClient):
    """Skips a text frame and carries on with the next infer."""

    async def on_text(self, ws: ClientConnection) -> None:
        """Ignores it: the bug."""
