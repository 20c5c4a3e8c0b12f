"""Broken PlugRL env clients, wire level: each breaks one clause of the plugrl-client suite."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection

from checks.plugrl.codec import NDARRAY_KEY, pack
from checks.plugrl_client.reference import ReferenceClient


class EarlyInfer(ReferenceClient):
    """Sends its first infer without waiting for the metadata."""

    async def before_metadata(self, ws: ClientConnection) -> None:
        await ws.send(self.encode(self.infer_message(list(range(self.count)))))


class OffersDeflate(ReferenceClient):
    """Keeps the library default: permessage-deflate offered."""

    def connect_options(self) -> dict[str, Any]:
        return {"max_size": None}


class FrameCap(ReferenceClient):
    """Keeps the 1 MiB frame cap, so the 2 MiB metadata closes it with 1009."""

    def connect_options(self) -> dict[str, Any]:
        return {"compression": None, "max_size": 1 << 20}


class JsonText(ReferenceClient):
    """Sends its messages as JSON text frames."""

    def encode(self, message: dict[str, Any]) -> bytes | str:
        return json.dumps({"message_type": message["message_type"]})


class StrKeyArrays(ReferenceClient):
    """Packs arrays with str keys ("__ndarray__"), not the bin keys of the convention."""

    def encode(self, message: dict[str, Any]) -> bytes | str:
        def convert(value: Any) -> Any:
            if isinstance(value, np.ndarray):
                return {
                    "__ndarray__": True,
                    "data": value.tobytes(),
                    "dtype": value.dtype.str,
                    "shape": list(value.shape),
                }
            if isinstance(value, dict):
                return {key: convert(item) for key, item in value.items()}
            return value

        return pack(convert(message))


class BinMessageType(ReferenceClient):
    """Sends message_type as bin (a msgpack library's raw default)."""

    def encode(self, message: dict[str, Any]) -> bytes | str:
        return pack({**message, "message_type": message["message_type"].encode()})


class NoStepIds(ReferenceClient):
    """Leaves step_ids out of its infers."""

    def infer_message(self, envs: list[int]) -> dict[str, Any]:
        message = super().infer_message(envs)
        del message["step_ids"]
        return message


class DoubleInfer(ReferenceClient):
    """Sends a second infer right after the first, before any feedback."""

    async def before_metadata(self, ws: ClientConnection) -> None:
        self.doubled = False

    def infer_message(self, envs: list[int]) -> dict[str, Any]:
        return super().infer_message(envs)

    async def exchange(self, ws: ClientConnection) -> None:
        await ws.send(self.encode(self.infer_message(list(range(self.count)))))
        await super().exchange(ws)


_ = NDARRAY_KEY  # the convention StrKeyArrays breaks
