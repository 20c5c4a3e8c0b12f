"""Conforming PlugRL servers that make unusual but legal choices; the suite must pass each.

Each is the zoo's `ZooServer` with one hook overridden, the way a real
server may differ from the reference without breaking the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
from http import HTTPStatus
from typing import Any

import numpy as np

from tests.zoo.plugrl_server.core import Connection, ZooServer

PING_INTERVAL = 0.002  # seconds between the flood's pings


class PingFlood(ZooServer):
    """Pings its clients every couple of milliseconds, and otherwise conforms."""

    async def greet(self, connection: Connection) -> None:
        await super().greet(connection)
        asyncio.get_running_loop().create_task(self._flood(connection))

    @staticmethod
    async def _flood(connection: Connection) -> None:
        with contextlib.suppress(Exception):  # ends with the connection
            while True:
                await connection.ws.ping()
                await asyncio.sleep(PING_INTERVAL)


class RefusesCompressionOffers(ZooServer):
    """Answers a handshake that offers permessage-deflate with 400: compression is never negotiated."""

    def serve_options(self) -> dict[str, Any]:
        return {**super().serve_options(), "process_request": self._refuse_offers}

    @staticmethod
    def _refuse_offers(connection: Any, request: Any) -> Any:
        if "permessage-deflate" in request.headers.get("Sec-WebSocket-Extensions", ""):
            return connection.respond(HTTPStatus.BAD_REQUEST, "PlugRL runs without compression\n")
        return None


class LateMetadata(ZooServer):
    """Takes a while to send its metadata (loading a policy, say), well within the client's deadline."""

    def __init__(self, *, metadata_delay: float = 0.3, **options: Any) -> None:
        super().__init__(**options)
        self.metadata_delay = metadata_delay

    async def greet(self, connection: Connection) -> None:
        await asyncio.sleep(self.metadata_delay)
        await super().greet(connection)


class ExtraActionKeys(ZooServer):
    """Adds keys the protocol does not name: timing at the top, numpy scalars in `data`."""

    def action_message(self, connection: Connection, env_ids: np.ndarray, action: np.ndarray) -> Any:
        message = super().action_message(connection, env_ids, action)
        message["server_timing"] = {"infer_ms": 1.5}
        message["data"]["value"] = np.float32(0.25)
        message["data"]["policy_step"] = np.int64(connection.infers)
        return message


class TwoDimensionalAction(ZooServer):
    """Has one action value per step and sends the chunk as [H, n], with no da axis."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**options, "action_dim": 1})

    def action(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        return super().action(connection, env_ids)[:, :, 0]


class MatrixAction(ZooServer):
    """Has a 2 x 3 action per step, [H, n, 2, 3], and declares action_dim 6."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**options, "action_dim": 6})

    def action(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        return super().action(connection, env_ids).reshape(self.horizon, len(env_ids), 2, 3)


# ---------------------------------------------------------------- policies the row check cannot judge


class RowIndexPolicy(ZooServer):
    """Answers each row with its position in the batch: env i's action is still in row i."""

    def action(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        positions = np.arange(len(env_ids), dtype=np.float64).reshape(1, -1, 1) / 10
        return np.broadcast_to(positions, (self.horizon, len(env_ids), self.action_dim)).astype(self.action_dtype)


class ConstantPolicy(ZooServer):
    """Answers every env with the same chunk, whatever it observes."""

    def action(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        return np.full((self.horizon, len(env_ids), self.action_dim), 0.5, dtype=self.action_dtype)


class SamplingPolicy(ZooServer):
    """Samples each chunk: the same observation gets a different chunk each time."""

    def action(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        noise = np.random.default_rng().uniform(-1, 1, (self.horizon, len(env_ids), self.action_dim))
        return (super().action(connection, env_ids) + noise).astype(self.action_dtype)


# ---------------------------------------------------------------- lenient reuse


class AcceptsIntegerMask(ZooServer):
    """Reads a 0/1 integer `reuse` as the |b1 mask it stands for (SPEC 10.1 sends |b1; the meaning is one)."""

    def read_infer(self, connection: Connection, message: dict) -> np.ndarray:
        reuse = message.get("reuse")
        if isinstance(reuse, np.ndarray) and reuse.dtype.kind in "iu" and set(reuse.tolist()) <= {0, 1}:
            message = {**message, "reuse": reuse.astype(np.bool_)}
        return super().read_infer(connection, message)
