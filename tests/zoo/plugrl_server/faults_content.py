"""Zoo faults in what a PlugRL server sends: its metadata, its actions and their env_ids.

Each class is the conforming `ZooServer` with one hook overridden; `ZOO` in
`catalogue.py` says which clause the suite must flag for each.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import numpy as np

from tests.zoo.plugrl_server.core import ZooServer
from tests.zoo.plugrl_server.messages import pack

# ---------------------------------------------------------------- 5.3 / 4.3: the action


class EnvMajor(ZooServer):
    """Forgets the transpose: sends [n, H, da]."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids).swapaxes(0, 1)


class ReshapeNotTranspose(ZooServer):
    """Computes [n, H, da] and relabels the buffer as [H, n, da] instead of transposing it."""

    def action(self, connection, env_ids):
        env_major = np.ascontiguousarray(super().action(connection, env_ids).swapaxes(0, 1))
        return env_major.reshape(self.horizon, len(env_ids), self.action_dim)


class PermutedRows(ZooServer):
    """Echoes `env_ids` correctly but sends the rows in reverse order."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids)[:, ::-1]


class SortedRows(ZooServer):
    """Follows each env's observation, but sends the rows in ascending env order while `env_ids`
    keeps the infer's order."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids)[:, np.argsort(env_ids, kind="stable")]


class NoEnvIds(ZooServer):
    """The older single-env dialect: the action has no `env_ids`."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        del message["data"]["env_ids"]
        return message


class SortedEnvIds(ZooServer):
    """Answers rows and `env_ids` in ascending env order, not the request's order."""

    def action_message(self, connection, env_ids, action):
        order = np.argsort(env_ids, kind="stable")
        return super().action_message(connection, env_ids[order], action[:, order])


class EnvIdsAsList(ZooServer):
    """Sends `env_ids` as a plain msgpack list instead of an ndarray."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        message["data"]["env_ids"] = env_ids.tolist()
        return message


class EnvIdsInt32(ZooServer):
    """Sends `env_ids` as `<i4` instead of `<i8`."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        message["data"]["env_ids"] = env_ids.astype("<i4")
        return message


class EnvIdsBigEndian(ZooServer):
    """Sends `env_ids` as big-endian `>i8`: numpy reads it, a client reading `<i8` bytes does not."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        message["data"]["env_ids"] = env_ids.astype(">i8")
        return message


class EnvIdsColumn(ZooServer):
    """Sends `env_ids` as a column, `<i8 [n, 1]`, instead of `[n]`."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        message["data"]["env_ids"] = np.asarray(env_ids, dtype="<i8").reshape(-1, 1)
        return message


class FlatAction(ZooServer):
    """With one step and one action value, squeezes the chunk to `[n]` instead of `[1, n]`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{"horizon": 1, "action_dim": 1, **options})

    def action(self, connection, env_ids):
        return super().action(connection, env_ids).reshape(-1)


class WrongHorizon(ZooServer):
    """Declares H in the metadata but sends H + 1 steps."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return np.concatenate([chunk, chunk[-1:]], axis=0)


class WrongActionDim(ZooServer):
    """Declares action_dim but sends one more column."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return np.concatenate([chunk, chunk[..., -1:]], axis=2)


class VaryingHorizon(ZooServer):
    """Declares no horizon and sends H, then H + 1, then H, ... on one connection."""

    def default_metadata(self):
        metadata = super().default_metadata()
        del metadata["action_horizon"]
        return metadata

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return np.concatenate([chunk, chunk[-1:]], axis=0) if connection.infers % 2 == 0 else chunk


class ActionAsList(ZooServer):
    """Sends the chunk as nested msgpack lists instead of an ndarray."""

    def action_message(self, connection, env_ids, action):
        return super().action_message(connection, env_ids, action.tolist())


class EmptyChunk(ZooServer):
    """Declares no horizon and sends chunks of zero steps, [0, n, da]."""

    def default_metadata(self):
        metadata = super().default_metadata()
        del metadata["action_horizon"]
        return metadata

    def action(self, connection, env_ids):
        return super().action(connection, env_ids)[:0]


class DriftingDtype(ZooServer):
    """Answers with float32 and float64 chunks in turn on one connection."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return chunk.astype("<f8") if connection.infers % 2 == 0 else chunk


class NaNActions(ZooServer):
    """Lets a NaN through in the last step of every chunk."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids).copy()
        chunk[-1, :, 0] = np.nan
        return chunk


class BoolAction(ZooServer):
    """Sends the chunk with a bool dtype."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids) > 0.05


class ShortNdarray(ZooServer):
    """Emits an action ndarray whose data is shorter than prod(shape) * itemsize."""

    def encode(self, message):
        if message.get("message_type") != "action":
            return pack(message)
        action = message["data"]["action"]
        message["data"]["action"] = {
            b"__ndarray__": True,
            b"data": action.tobytes()[: -action.dtype.itemsize],
            b"dtype": action.dtype.str,
            b"shape": list(action.shape),
        }
        return pack(message)


class InvalidMsgpack(ZooServer):
    """Answers an infer with bytes that are not msgpack (0xc1 is never used)."""

    def encode(self, message):
        return b"\xc1\xc1\xc1" if message.get("message_type") == "action" else pack(message)


# ---------------------------------------------------------------- 5.1 / 10: the metadata


class NoMetadata(ZooServer):
    """Never speaks first; waits for the client."""

    async def greet(self, connection):
        pass


class BareMetadata(ZooServer):
    """openpi style: the first frame is the bare metadata map, with no envelope."""

    async def greet(self, connection):
        await connection.ws.send(pack(self.metadata))


class MetadataTwice(ZooServer):
    """Sends the metadata envelope twice."""

    async def greet(self, connection):
        await super().greet(connection)
        await super().greet(connection)


class HorizonAsString(ZooServer):
    """Declares action_horizon as the string "4"."""

    def default_metadata(self):
        return {**super().default_metadata(), "action_horizon": str(self.horizon)}


class RequiresApiKey(ZooServer):
    """Refuses the handshake (401) unless an Authorization header is sent, which SPEC 1.2 makes optional."""

    def serve_options(self):
        return {**super().serve_options(), "process_request": self.demand_key}

    def demand_key(self, connection, request):
        if "Authorization" not in request.headers:
            return connection.respond(HTTPStatus.UNAUTHORIZED, "an API key is required\n")
        return None


class FeaturesAsString(ZooServer):
    """Lists its features as one string instead of a list of strings."""

    def default_metadata(self):
        return {**super().default_metadata(), "features": ",".join(self.features)}


class ProtocolVersionTwo(ZooServer):
    """Says protocol_version 2 while speaking version 1."""

    def default_metadata(self):
        return {**super().default_metadata(), "protocol_version": 2}
