"""A conforming RLlink reference server, in either dialect: the only runnable json-dialect server here.

It trains nothing: a tiny numpy policy whose weights are perturbed once per
full batch (so weights_seq_no rises by one per batch). Like RLlib it closes a
connection on a malformed frame or a bad episode and stops listening for
`recycle` seconds, but it never wedges, and it serves every client that
connects. It decodes client frames with the checker's guarded codec, so a
client's pickled array is refused, never unpickled.
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.errors import CheckError, Malformed
from checks.rllink.codec import HEADER_SIZE, Dialect, decode_body, encode, lenient_length
from checks.rllink.onnx_policy import onnx_file as policy_onnx_file
from checks.serving import serve_until_interrupted

HIDDEN = 8
MAX_BODY = 64 * 1024 * 1024
REQUESTS = ("PING", "GET_CONFIG", "GET_STATE", "EPISODES", "EPISODES_AND_GET_STATE")
IGNORED = (
    "PONG", "SET_CONFIG", "SET_STATE", "ACTION_SPACE", "OBSERVATION_SPACE", "GET_WORKER_ARGS", "GET_WEIGHTS",
    "REPORT_SAMPLES", "START_EPISODE", "GET_ACTION", "LOG_ACTION", "LOG_RETURNS", "END_EPISODE",
)  # fmt: skip


class BadEpisodes(CheckError):
    """An EPISODES body that does not hold valid episodes."""


@dataclass
class ReferenceServer:
    dialect: Dialect = "msgpack"
    fragment_length: int = 64
    obs_dim: int = 4
    actions: int = 2
    recycle: float = 5.0
    host: str = "127.0.0.1"
    port: int = 0
    seq: int = 0
    queued: int = 0
    server: asyncio.Server | None = None
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    connections: set[asyncio.StreamWriter] = field(default_factory=set)
    handlers: set[asyncio.Task[Any]] = field(default_factory=set)
    demo_options: dict[str, Any] = field(default_factory=dict)  # options a demo target of this server runs with

    def __post_init__(self) -> None:
        self.weights = {
            "pi.0.weight": self.rng.normal(0, 0.1, (HIDDEN, self.obs_dim)).astype(np.float32),
            "pi.0.bias": np.zeros(HIDDEN, np.float32),
            "pi.2.weight": self.rng.normal(0, 0.1, (self.actions, HIDDEN)).astype(np.float32),
            "pi.2.bias": np.zeros(self.actions, np.float32),
        }

    @property
    def url(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    # ------------------------------------------------------------ replies (hooks the zoo overrides)

    def config_reply(self) -> dict[str, Any]:
        if self.dialect == "json":
            return {"type": "SET_CONFIG", "env_steps_per_sample": self.fragment_length, "force_on_policy": True}
        config = {"rollout_fragment_length": self.fragment_length, "observation_dim": self.obs_dim}
        return {"type": "SET_CONFIG", "config": pickle.dumps(config)}

    def state_reply(self) -> dict[str, Any]:
        if self.dialect == "json":
            return {"type": "SET_STATE", "onnx_file": onnx_file(self.weights), "weights_seq_no": self.seq}
        return {"type": "SET_STATE", "state": {"rl_module": dict(self.weights), "weights_seq_no": self.seq}}

    def train(self) -> None:
        for name, value in self.weights.items():
            self.weights[name] = (value + self.rng.normal(0, 0.01, value.shape)).astype(np.float32)
        self.seq += 1
        self.queued = 0

    def count_steps(self, body: dict[str, Any]) -> int:
        episodes = body.get("episodes")
        if not isinstance(episodes, list):
            raise BadEpisodes("no `episodes` list")
        return sum(episode_steps(e, self.dialect) for e in episodes)

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        writer.write(encode(message, self.dialect))
        await writer.drain()

    async def answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "PING":
            await self.write(writer, {"type": "PONG"})
        elif kind == "GET_CONFIG":
            await self.write(writer, self.config_reply())
        elif kind == "GET_STATE":
            await self.write(writer, self.state_reply())
        elif kind in ("EPISODES", "EPISODES_AND_GET_STATE"):
            self.queued += self.count_steps(message)
            if kind == "EPISODES_AND_GET_STATE":
                if self.queued >= self.fragment_length:
                    self.train()
                # A short batch gets the current weights at once instead of a deadlock.
                await self.write(writer, self.state_reply())

    # ------------------------------------------------------------ connection handling

    async def read_message(self, reader: asyncio.StreamReader) -> dict[str, Any]:
        header = await reader.readexactly(HEADER_SIZE)
        body = await reader.readexactly(lenient_length(header, MAX_BODY))
        message = decode_body(body, self.dialect)
        if message["type"] not in REQUESTS + IGNORED:
            raise Malformed(f"unknown type {message['type']!r}")
        return message

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.handlers.add(task)
            task.add_done_callback(self.handlers.discard)
        self.connections.add(writer)
        faulty = False
        try:
            while True:
                message = await self.read_message(reader)
                await self.answer(writer, message)
        except (Malformed, BadEpisodes):
            faulty = True
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.connections.discard(writer)
            writer.close()
        if faulty:
            await self.recycle_listener()

    async def recycle_listener(self) -> None:
        """Stop listening for `recycle` seconds, then listen again, as RLlib does after an error."""
        if self.server is None or not self.server.is_serving():
            return
        self.server.close()
        await asyncio.sleep(self.recycle)
        self.server = await asyncio.start_server(self.handle, self.host, self.port, reuse_address=True)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for writer in list(self.connections):
            writer.close()
        self.stopped.set()
        if self.handlers:
            # Let handlers see their EOF and end, rather than be cancelled when the loop shuts down.
            await asyncio.wait(set(self.handlers), timeout=1.0)


def episode_steps(episode: Any, dialect: Dialect) -> int:
    """The episode's step count; BadEpisodes unless its lengths agree (len(obs) = len(actions) + 1 = ...)."""
    if not isinstance(episode, dict):
        raise BadEpisodes("an episode is not a map")
    try:
        if dialect == "json":
            obs, actions, rewards = episode["obs"], episode["actions"], episode["rewards"]
            extra = [episode["action_dist_inputs"], episode["action_logp"]]
            flags = [episode["is_terminated"], episode["is_truncated"]]
        else:
            episode["id_"]
            obs, actions, rewards = (episode[k]["data"] for k in ("observations", "actions", "rewards"))
            extra = [episode["extra_model_outputs"][k]["data"] for k in ("action_dist_inputs", "action_logp")]
            flags = [episode["is_terminated"], episode["is_truncated"]]
            if len(episode["infos"]["data"]) != len(obs):
                raise BadEpisodes("infos and observations differ in length")
        steps = len(actions)
    except (KeyError, TypeError) as exc:
        raise BadEpisodes(f"episode lacks {exc}") from exc
    if len(obs) != steps + 1 or len(rewards) != steps or any(len(e) != steps for e in extra):
        raise BadEpisodes("lengths do not satisfy len(obs) = len(actions) + 1 = len(rewards) + 1")
    if not all(isinstance(f, bool) for f in flags):
        raise BadEpisodes("is_terminated / is_truncated are not bools")
    return steps


def onnx_file(weights: dict[str, np.ndarray]) -> str:
    """The policy as a gzipped, base64 ONNX model: Gemm, Relu, Gemm."""
    return policy_onnx_file(
        [(weights["pi.0.weight"], weights["pi.0.bias"]), (weights["pi.2.weight"], weights["pi.2.bias"])]
    )


# The demo's reference server recycles quickly, and its target waits to match: a run in seconds, not a minute.
DEMO_RECYCLE = 0.5
DEMO_OPTIONS = {"recycle_wait": 1.0}


async def start_demo_server(host: str = "127.0.0.1", port: int = 0) -> ReferenceServer:
    """The reference server as the service's demo runs it; its `demo_options` go on the demo target."""
    server = await start_reference_server(host, port, recycle=DEMO_RECYCLE)
    server.demo_options = dict(DEMO_OPTIONS)
    return server


async def start_reference_server(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    dialect: Dialect = "msgpack",
    fragment_length: int = 64,
    recycle: float = 5.0,
    server_class: type[ReferenceServer] = ReferenceServer,
) -> ReferenceServer:
    """Start listening and return at once; `port=0` takes a free port from the OS."""
    reference = server_class(dialect=dialect, fragment_length=fragment_length, recycle=recycle, host=host)
    reference.server = await asyncio.start_server(reference.handle, host, port, reuse_address=True)
    reference.port = reference.server.sockets[0].getsockname()[1]
    return reference


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server rllink", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5555)
    parser.add_argument("--dialect", choices=("json", "msgpack"), default="msgpack")
    parser.add_argument("--fragment-length", type=int, default=64, help="env steps per on-policy batch")
    parser.add_argument("--recycle", type=float, default=5.0, help="seconds the listener stays closed after an error")
    args = parser.parse_args(argv)
    if args.fragment_length < 1 or not 0 <= args.recycle <= 600:
        parser.error("--fragment-length must be >= 1 and --recycle 0..600 seconds")

    return serve_until_interrupted(
        lambda: start_reference_server(
            args.host, args.port, dialect=args.dialect, fragment_length=args.fragment_length, recycle=args.recycle
        ),
        lambda url: f"RLlink reference server ({args.dialect}) listening on {url}",
        until=lambda reference: reference.stopped.wait(),
    )
