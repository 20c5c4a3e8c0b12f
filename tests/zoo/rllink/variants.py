"""Conforming RLlink servers that differ where the protocol lets them: each must pass.

A strict header reader, RLlib's stale-state race (one repeated
weights_seq_no, never a decrease), non-ASCII JSON counted in bytes, and a
trainer that takes its time over each batch.
"""

from __future__ import annotations

import asyncio
from typing import Any

from checks.errors import Malformed
from checks.rllink.codec import HEADER_SIZE, decode_body, strict_length
from checks.rllink.reference import IGNORED, MAX_BODY, REQUESTS, ReferenceServer


class StrictHeader(ReferenceServer):
    """Reads only 8 ASCII digits as a header; anything int() alone would read is a malformed frame."""

    async def read_message(self, reader: asyncio.StreamReader) -> dict[str, Any]:
        header = await reader.readexactly(HEADER_SIZE)
        message = decode_body(await reader.readexactly(strict_length(header, MAX_BODY)), self.dialect)
        if message["type"] not in REQUESTS + IGNORED:
            raise Malformed(f"unknown type {message['type']!r}")
        return message


class StaleStateRace(ReferenceServer):
    """RLlib's race: the second batch lands between two set_state calls and gets the weights it already has."""

    batches = 0

    async def answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if message["type"] != "EPISODES_AND_GET_STATE":
            await super().answer(writer, message)
            return
        self.batches += 1
        if self.batches != 2:
            await super().answer(writer, message)
            return
        self.queued += self.count_steps(message)
        await self.write(writer, self.state_reply())
        self.train()


class NonAsciiJson(ReferenceServer):
    """Puts non-ASCII text in SET_CONFIG and counts its UTF-8 bytes in the header, as it should."""

    def config_reply(self) -> dict[str, Any]:
        return {**super().config_reply(), "trainer": "Übungsleiter für CartPole, 训练 🚀"}


class SlowTrainer(ReferenceServer):
    """Takes 0.4 s over each full batch, as a real training iteration does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.training = 0.4

    async def answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if message["type"] == "EPISODES_AND_GET_STATE":
            await asyncio.sleep(self.training)
        await super().answer(writer, message)
