"""Broken RLlink external clients: each overrides one decision of the reference client (clauses: catalogue.py)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import numpy as np

from checks.rllink.codec import encode
from checks.rllink_client.reference import Chunk, ReferenceClient


class WaitsForGreeting(ReferenceClient):
    """Connects and waits for the server to speak first (RLlib never does)."""

    async def greet(self) -> None:
        assert self.reader is not None
        await asyncio.wait_for(self.reader.read(1), 30)


class SkipsPing(ReferenceClient):
    """Starts with GET_CONFIG: RLlib allows it, the documented workflow does not."""

    async def greet(self) -> None:
        """No PING."""


class EpisodesBeforeState(ReferenceClient):
    """Sends a batch before it asked for the weights (it samples with a model of its own)."""

    async def handshake(self) -> None:
        await self.greet()
        self.fragment_length = self.read_config(await self.call(self.request("GET_CONFIG"), "SET_CONFIG"))
        chunk = Chunk(uuid.uuid4().hex, 0, [self.observe(), self.observe()], [0], [1.0], [[0.0, 0.0]], [-0.6931])
        await self.send({"type": "EPISODES", "episodes": [self.episode(chunk)]})
        self.apply_state(await self.call(self.request("GET_STATE"), "SET_STATE"))


class SpacePaddedHeader(ReferenceClient):
    """Pads the length header with spaces instead of zeros (Python's int() would take it; the protocol does not)."""

    def frame(self, message: dict[str, Any]) -> bytes:
        body = encode(message, self.dialect)[8:]
        return str(len(body)).rjust(8).encode() + body


class LowerCaseTypes(ReferenceClient):
    """Writes the type names in lower case (RLlib's enum lookup is case-sensitive)."""

    def request(self, name: str) -> dict[str, Any]:
        return {"type": name.lower()}


class PipelinesBatches(ReferenceClient):
    """Sends a PING right behind EPISODES_AND_GET_STATE instead of waiting for SET_STATE."""

    async def exchange_batch(self, message: dict[str, Any]) -> None:
        await self.send(message)
        await self.send(self.request("PING"))
        self.apply_state(await self.receive("SET_STATE"))


class WaitsAfterEpisodes(ReferenceClient):
    """Waits for an acknowledgement of a bare EPISODES, which never comes."""

    async def send_finished(self, chunk: Chunk) -> bool:
        await self.send({"type": "EPISODES", "episodes": [self.episode(chunk)]})
        await self.receive("PONG")
        return True


class CountsObservations(ReferenceClient):
    """Counts observations, not actions, so every batch is one step short."""

    def batch_steps(self) -> int:
        return self.fragment_length - 1


class EnvStepsKey(ReferenceClient):
    """Follows the old docs page: `env_steps` instead of `timesteps`."""

    def batch_message(self, chunks: list[Chunk], steps: int) -> dict[str, Any]:
        message = super().batch_message(chunks, steps)
        message["env_steps"] = message.pop("timesteps")
        return message


class NoLogp(ReferenceClient):
    """Sends the docs' example episode: no action_logp."""

    def episode(self, chunk: Chunk) -> dict[str, Any]:
        episode = super().episode(chunk)
        episode.pop("action_logp", None)
        episode.get("extra_model_outputs", {}).pop("action_logp", None)
        return episode


class DropsResetObservation(ReferenceClient):
    """Leaves out the reset observation: as many observations as actions."""

    def episode(self, chunk: Chunk) -> dict[str, Any]:
        return super().episode(Chunk(chunk.id_, chunk.t_started, chunk.obs[1:], chunk.actions, chunk.rewards,
                                     chunk.dist, chunk.logp, chunk.terminated))  # fmt: skip


class OneBasedActions(ReferenceClient):
    """Reports actions 1..n instead of 0..n-1."""

    def act(self, logits: np.ndarray) -> tuple[int, float]:
        action, logp = super().act(logits)
        return action + 1, logp


class LogpFromLogits(ReferenceClient):
    """Takes the raw logit of the action as its log-probability."""

    def act(self, logits: np.ndarray) -> tuple[int, float]:
        action, _ = super().act(logits)
        return action, float(logits[action])


class IgnoresNewWeights(ReferenceClient):
    """Loads the weights of the handshake, then never the ones a batch brings."""

    def apply_state(self, message: dict[str, Any]) -> None:
        if self.policy is None:
            super().apply_state(message)


class NewIdPerChunk(ReferenceClient):
    """Gives the rest of a cut episode a fresh id_ (breaks RLlib's episode-return metrics)."""

    def cut(self, chunk: Chunk) -> Chunk:
        rest = super().cut(chunk)
        rest.id_ = uuid.uuid4().hex
        return rest
