"""A conforming RLlink external env client, in either dialect: the rllink-client suite's known-good client.

    rlconform reference-client rllink tcp://HOST:PORT [--dialect json|msgpack] [--retry-for 10]

It runs a probe env (observations drawn uniformly from [-1, 1], reward 1 per
step, episodes of EPISODE_LENGTH steps), does its own inference with the
weights of the last SET_STATE (onnxruntime for json's ONNX file, numpy for
msgpack's module arrays), and sends each ended episode with a bare EPISODES
and the rest of a batch, cut, with EPISODES_AND_GET_STATE. It never unpickles
the msgpack config: it reads the fragment length from the pickle's opcodes.
When the server closes, it reconnects (retrying while refused for
`--retry-for` seconds) and repeats the handshake. Every method is one
decision, so the zoo's broken clients override exactly one.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gzip
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from checks.errors import PeerClosed
from checks.rllink.codec import HEADER_SIZE, Dialect, decode_body, encode, strict_length
from checks.rllink.pickle_scan import scan
from checks.rllink_client.policy import forward, layers_from_state, log_softmax

EPISODE_LENGTH = 12
MAX_BATCHES = 10_000
FRAME_CAP = 64 * 1024 * 1024


@dataclass
class Chunk:
    """One episode's steps since its last cut."""

    id_: str
    t_started: int
    obs: list[np.ndarray]
    actions: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    dist: list[list[float]] = field(default_factory=list)
    logp: list[float] = field(default_factory=list)
    terminated: bool = False

    @property
    def t(self) -> int:
        return self.t_started + len(self.actions)


class ReferenceClient:
    def __init__(self, url: str, dialect: Dialect = "json", obs_dim: int = 4, retry_for: float = 10.0) -> None:
        parts = urlsplit(url if "://" in url else f"tcp://{url}")
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 0
        self.dialect: Dialect = dialect
        self.obs_dim = obs_dim
        self.retry_for = retry_for
        self.rng = np.random.default_rng(1)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.policy: Any = None
        self.fragment_length = 0
        self.handshakes = 0

    # -- decisions the zoo overrides

    def frame(self, message: dict[str, Any]) -> bytes:
        return encode(message, self.dialect)

    def request(self, name: str) -> dict[str, Any]:
        return {"type": name}

    async def greet(self) -> None:
        """PING first, as the docs' workflow says."""
        await self.call(self.request("PING"), "PONG")

    async def handshake(self) -> None:
        await self.greet()
        self.fragment_length = self.read_config(await self.call(self.request("GET_CONFIG"), "SET_CONFIG"))
        self.apply_state(await self.call(self.request("GET_STATE"), "SET_STATE"))

    def read_config(self, message: dict[str, Any]) -> int:
        if self.dialect == "json":
            return int(message["env_steps_per_sample"])
        length, how = scan(message["config"]).fragment_length()
        if length is None:
            raise ValueError(f"no fragment length in the config: {how}")
        return length

    def apply_state(self, message: dict[str, Any]) -> None:
        if self.dialect == "json":
            import onnxruntime  # noqa: PLC0415  # only the json dialect needs it

            model = gzip.decompress(base64.b64decode(message["onnx_file"]))
            self.policy = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        else:
            self.policy = layers_from_state(message["state"]["rl_module"])

    def batch_steps(self) -> int:
        return self.fragment_length

    def logits(self, obs: np.ndarray) -> np.ndarray:
        if self.dialect == "json":
            out: np.ndarray = self.policy.run(None, {"obs": obs[None, :].astype(np.float32)})[0][0]
            return out
        logits: np.ndarray = forward(self.policy, obs[None, :])[0]
        return logits

    def act(self, logits: np.ndarray) -> tuple[int, float]:
        """A sampled action and its log-probability."""
        logp = log_softmax(logits.astype(np.float64))
        action = int(self.rng.choice(len(logits), p=np.exp(logp) / np.exp(logp).sum()))
        return action, float(logp[action])

    def observe(self) -> np.ndarray:
        return self.rng.uniform(-1, 1, self.obs_dim).astype(np.float32)

    def cut(self, chunk: Chunk) -> Chunk:
        """The rest of a cut episode: same id, t goes on, starting from the last observation."""
        return Chunk(chunk.id_, chunk.t, [chunk.obs[-1]])

    def episode(self, chunk: Chunk) -> dict[str, Any]:
        obs = [o.tolist() for o in chunk.obs]
        if self.dialect == "json":
            return {
                "obs": obs, "actions": chunk.actions, "rewards": chunk.rewards, "action_dist_inputs": chunk.dist,
                "action_logp": chunk.logp, "is_terminated": chunk.terminated, "is_truncated": False,
            }  # fmt: skip

        def buffer(data: list[Any]) -> dict[str, Any]:
            return {"data": data, "lookback": 0, "finalized": False, "space": None}

        return {
            "id_": chunk.id_, "agent_id": None, "module_id": None, "multi_agent_episode_id": None,
            "observations": buffer(obs), "actions": buffer(chunk.actions), "rewards": buffer(chunk.rewards),
            "infos": buffer([{} for _ in obs]),
            "extra_model_outputs": {"action_dist_inputs": buffer(chunk.dist), "action_logp": buffer(chunk.logp)},
            "is_terminated": chunk.terminated, "is_truncated": False, "t_started": chunk.t_started, "t": chunk.t,
            "_observation_space": None, "_action_space": None, "_start_time": None, "_last_step_time": None,
        }  # fmt: skip

    async def send_finished(self, chunk: Chunk) -> bool:
        """An ended episode goes at once, with a bare EPISODES (no reply comes); True when sent."""
        await self.send({"type": "EPISODES", "episodes": [self.episode(chunk)]})
        return True

    def batch_message(self, chunks: list[Chunk], steps: int) -> dict[str, Any]:
        return {"type": "EPISODES_AND_GET_STATE", "episodes": [self.episode(c) for c in chunks], "timesteps": steps}

    async def exchange_batch(self, message: dict[str, Any]) -> None:
        await self.send(message)
        self.apply_state(await self.receive("SET_STATE"))

    def on_close(self) -> str:
        """`reconnect` (and repeat the handshake) or `exit` when the server ends the connection."""
        return "reconnect"

    # -- transport

    async def send(self, message: dict[str, Any]) -> None:
        assert self.writer is not None
        self.writer.write(self.frame(message))
        try:
            await self.writer.drain()
        except (ConnectionError, OSError) as exc:
            raise PeerClosed(by="network", reason=str(exc)) from None

    async def receive(self, expected: str) -> dict[str, Any]:
        assert self.reader is not None
        try:
            header = await self.reader.readexactly(HEADER_SIZE)
            body = await self.reader.readexactly(strict_length(header, FRAME_CAP))
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            raise PeerClosed(by="network", reason=str(exc)) from None
        message = decode_body(body, self.dialect)
        if message["type"] != expected:
            raise ValueError(f"expected {expected}, got {message['type']}")
        return message

    async def call(self, message: dict[str, Any], expected: str) -> dict[str, Any]:
        await self.send(message)
        return await self.receive(expected)

    async def connect(self) -> bool:
        loop = asyncio.get_running_loop()
        end = loop.time() + self.retry_for
        while True:
            try:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
                return True
            except OSError:
                if loop.time() >= end:
                    return False
                await asyncio.sleep(0.2)

    # -- the loop

    async def sample(self) -> None:
        """Batches until the server closes the connection."""
        chunks: list[Chunk] = []
        chunk = Chunk(uuid.uuid4().hex, 0, [self.observe()])
        steps = 0
        for _ in range(MAX_BATCHES * max(self.fragment_length, 1)):
            obs = chunk.obs[-1]
            logits = self.logits(obs)
            action, logp = self.act(logits)
            chunk.actions.append(action)
            chunk.rewards.append(1.0)
            chunk.dist.append([float(x) for x in logits])
            chunk.logp.append(logp)
            chunk.obs.append(self.observe())
            chunk.terminated = chunk.t >= EPISODE_LENGTH
            steps += 1
            if steps == self.batch_steps():
                await self.exchange_batch(self.batch_message([*chunks, chunk], steps))
                chunks, steps = [], 0
                chunk = Chunk(uuid.uuid4().hex, 0, [self.observe()]) if chunk.terminated else self.cut(chunk)
            elif chunk.terminated:
                if not await self.send_finished(chunk):
                    chunks.append(chunk)
                chunk = Chunk(uuid.uuid4().hex, 0, [self.observe()])

    async def run(self) -> int:
        """Connect, handshake, sample; after a close, reconnect unless the server stays gone."""
        while await self.connect():
            try:
                await self.handshake()
                self.handshakes += 1
                await self.sample()
            except PeerClosed:
                pass
            finally:
                if self.writer is not None:
                    self.writer.close()
            if self.on_close() == "exit":
                break
        return 0 if self.handshakes else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-client rllink")
    parser.add_argument("url", help="the tcp:// address an rllink-client run announced")
    parser.add_argument("--dialect", choices=("json", "msgpack"), default="json")
    parser.add_argument("--obs-dim", type=int, default=4, help="observation width (the run's obs_dim)")
    parser.add_argument("--retry-for", type=float, default=10.0, help="seconds to retry a refused connect")
    args = parser.parse_args(argv)
    client = ReferenceClient(args.url, args.dialect, args.obs_dim, args.retry_for)
    code = asyncio.run(client.run())
    print(f"{client.handshakes} sessions", flush=True)
    return code
