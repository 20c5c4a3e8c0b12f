"""Broken PlugRL env clients, message level (SPEC 4.3, 5, 7.6, 8): each gets one message's content wrong."""

from __future__ import annotations

from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection

from checks.errors import Malformed
from checks.plugrl.codec import unpack
from checks.plugrl_client.reference import ProbeEnvs, ReferenceClient

KNOWN_METADATA = {"protocol_version", "server", "action_horizon", "action_dim", "features"}


class RejectsUnknownKeys(ReferenceClient):
    """Gives up on a metadata whose data holds a key it does not know."""

    def _binary(self, frame: bytes | str) -> bytes:
        raw = super()._binary(frame)
        unknown = set(unpack(raw).get("data", {})) - KNOWN_METADATA
        if unknown:
            raise Malformed(f"unknown metadata keys {sorted(unknown)}")
        return raw


class SkipsFeedbackRow(ReferenceClient):
    """Runs and feeds back every env but the last of each chunk, then asks for all of them again."""

    def read_action(self, message: dict[str, Any], envs: list[int]) -> tuple[list[int], np.ndarray]:
        order, action = super().read_action(message, envs)
        return order[:-1], action[:, :-1]


class FeedsBackUnasked(ReferenceClient):
    """Asks for every env but the last, and feeds back the last one too (stepped with its neighbour's action)."""

    def infer_message(self, envs: list[int]) -> dict[str, Any]:
        return super().infer_message(envs[:-1])

    def read_action(self, message: dict[str, Any], envs: list[int]) -> tuple[list[int], np.ndarray]:
        order, action = super().read_action(message, envs)
        return [*order, self.count - 1], np.concatenate([action, action[:, -1:]], axis=1)


class ExtraObservationKey(ReferenceClient):
    """Adds a `rewards` map beside images, states and text in every observation."""

    def __init__(self, url: str, envs: int = 3) -> None:
        super().__init__(url, envs)
        self.envs = ExtraKeyEnvs(envs)


class ExtraKeyEnvs(ProbeEnvs):
    def observation(self, envs: list[int]) -> dict[str, Any]:
        return {**super().observation(envs), "rewards": {}}


class NoTruncated(ReferenceClient):
    """Leaves `truncated` out of its feedbacks."""

    async def run_chunk(self, envs: list[int], action: np.ndarray) -> dict[str, Any]:
        feedback = await super().run_chunk(envs, action)
        del feedback["data"]["truncated"]
        return feedback


class Float32States(ReferenceClient):
    """Sends the probe states t and a as float32."""

    def __init__(self, url: str, envs: int = 3) -> None:
        super().__init__(url, envs)
        self.envs = Float32Envs(envs)


class Float32Envs(ProbeEnvs):
    def observation(self, envs: list[int]) -> dict[str, Any]:
        obs = super().observation(envs)
        obs["states"] = {name: value.astype(np.float32) for name, value in obs["states"].items()}
        return obs


class IdlesLastEnv(ReferenceClient):
    """Never steps its last env: that row of every feedback ran 0 steps of its chunk."""

    def __init__(self, url: str, envs: int = 3) -> None:
        super().__init__(url, envs)
        self.envs = IdleLastEnvs(envs)


class IdleLastEnvs(ProbeEnvs):
    def step(self, env: int, action: np.ndarray) -> tuple[float, bool]:
        if env == len(self.t) - 1:
            return 0.0, False
        return super().step(env, action)


class StaleAfterInfer(ReferenceClient):
    """After a reconnect, asks for env 0 only, then answers its action with the last connection's feedback."""

    async def on_reconnect(self, ws: ClientConnection) -> None:
        self.stale = self.held_feedback or self.last_feedback
        self.held_feedback = None

    async def exchange(self, ws: ClientConnection) -> None:
        stale: dict[str, Any] | None = getattr(self, "stale", None)
        if stale is not None:
            self.stale = None
            await ws.send(self.encode(self.infer_message([0])))
            await ws.recv()
            await ws.send(self.encode(stale))
        await super().exchange(ws)
