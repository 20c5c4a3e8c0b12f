"""A conforming PlugRL env client running the probe environment of SPEC 8.1: the suite's known-good client.

    rlconform reference-client plugrl ws://HOST:PORT [--envs 3] [--sessions 8] [--restart-delay 3]

Each session connects (no deflate, no frame cap), reads the metadata, then
loops infer -> action -> run the chunk -> feedback. A resync or any other
unexpected close reconnects with held feedback dropped; a stop or a text frame
ends the session. Like a person restarting an env process, it starts a fresh
session `--restart-delay` seconds after one ends, until the server is gone or
`--sessions` have run. Every method is one decision, so the zoo's broken
clients override exactly one.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidMessage, InvalidStatus

from checks.errors import Malformed, PeerClosed, Refused
from checks.plugrl.codec import EVIDENCE_BYTES, CodecError, pack, unpack
from checks.plugrl.protocol import REUSE_FEATURE, STOP_REASON
from checks.plugrl_client.probe import episode_length

RECONNECT_DELAY = 0.2
MAX_RECONNECTS = 5


class ProbeEnvs:
    """n probe envs: t counts steps in the episode, a holds the last applied action."""

    def __init__(self, count: int) -> None:
        self.t = np.zeros(count, dtype=np.float64)
        self.a = np.zeros((count, 1), dtype=np.float64)

    def step(self, env: int, action: np.ndarray) -> tuple[float, bool]:
        if self.a.shape[1] != action.shape[0]:
            self.a = np.zeros((len(self.t), action.shape[0]), dtype=np.float64)
        self.t[env] += 1
        self.a[env] = action
        return 1.0, self.t[env] >= episode_length(env)

    def reset(self, env: int) -> None:
        self.t[env] = 0

    def observation(self, envs: list[int]) -> dict[str, Any]:
        return {
            "images": {},
            "states": {"t": self.t[envs].reshape(-1, 1).copy(), "a": self.a[envs].copy()},
            "text": np.asarray(["probe"] * len(envs), dtype="<U5"),
        }


class ReferenceClient:
    def __init__(self, url: str, envs: int = 3) -> None:
        self.url = url
        self.count = envs
        self.envs = ProbeEnvs(envs)
        self.features: list[str] = []
        self.fed_back: dict[int, bool] = {}  # env -> whether its last feedback here ended its episode
        self.held_feedback: dict[str, Any] | None = None
        self.last_feedback: dict[str, Any] | None = None

    # -- decisions the zoo overrides

    def connect_options(self) -> dict[str, Any]:
        return {"compression": None, "max_size": None}

    def encode(self, message: dict[str, Any]) -> bytes | str:
        return pack(message)

    async def before_metadata(self, ws: ClientConnection) -> None:
        """A conforming client sends nothing before the metadata."""

    def read_action(self, message: dict[str, Any], envs: list[int]) -> tuple[list[int], np.ndarray]:
        data = message["data"]
        ids = data.get("env_ids")
        order = [int(i) for i in ids.tolist()] if isinstance(ids, np.ndarray) else envs
        return order, np.asarray(data["action"])

    def chunk_reward(self, rewards: list[float]) -> float:
        return float(sum(rewards))

    def stop_at_terminal(self) -> bool:
        return True

    def after_terminal_step(self, env: int) -> None:
        """Gymnasium NEXT_STEP autoreset: the reset waits until the terminal observation is fed back."""

    def reuse_row(self, env: int) -> bool:
        ended = self.fed_back.get(env)
        return REUSE_FEATURE in self.features and ended is False

    def infer_message(self, envs: list[int]) -> dict[str, Any]:
        reuse = [self.reuse_row(env) for env in envs]
        sent = [env for env, reused in zip(envs, reuse, strict=True) if not reused]
        message: dict[str, Any] = {
            "message_type": "infer",
            "data": self.envs.observation(sent),
            "env_indices": np.asarray(envs, dtype=np.int64),
            "step_ids": np.zeros(len(envs), dtype=np.int64),
        }
        if any(reuse):
            message["reuse"] = np.asarray(reuse, dtype=np.bool_)
        return message

    def on_close(self, reason: str) -> str:
        """`exit` after a stop, `reconnect` after anything else (a resync, a drop)."""
        return "exit" if reason == STOP_REASON else "reconnect"

    async def on_text(self, ws: ClientConnection) -> None:
        await ws.close(1000)
        raise Malformed("the server sent a text frame")

    async def on_reconnect(self, ws: ClientConnection) -> None:
        """Held feedback is stale on a new connection: drop it (SPEC 7.6)."""
        self.held_feedback = None

    # -- the loop

    async def run_chunk(self, envs: list[int], action: np.ndarray) -> dict[str, Any]:
        rows: list[tuple[float, bool]] = []
        for row, env in enumerate(envs):
            rewards, terminated = [], False
            for k in range(action.shape[0]):
                reward, terminated = self.envs.step(env, action[k, row].astype(np.float64).reshape(-1))
                rewards.append(reward)
                if terminated:
                    self.after_terminal_step(env)
                    if self.stop_at_terminal():
                        break
            rows.append((self.chunk_reward(rewards), bool(terminated)))
        return {
            "message_type": "feedback",
            "env_indices": np.asarray(envs, dtype=np.int64),
            "step_ids": np.zeros(len(envs), dtype=np.int64),
            "data": {
                "obs": self.envs.observation(envs),
                "rewards": np.asarray([r for r, _ in rows], dtype=np.float32),
                "terminated": np.asarray([d for _, d in rows], dtype=np.bool_),
                "truncated": np.zeros(len(envs), dtype=np.bool_),
                "info": {},
            },
        }

    async def connection(self, reconnecting: bool) -> None:
        """One connection; returns when it must be replaced.

        Raises when the session ends for good: Refused (no connection), PeerClosed (the server's stop)
        or Malformed (a text frame from the server).
        """
        try:
            ws = await connect(self.url, open_timeout=5, ping_interval=None, **self.connect_options())
        except (OSError, InvalidStatus, InvalidMessage, TimeoutError) as exc:
            # InvalidMessage: closed before any HTTP answer, as a proxy (a tap) does when the server behind it is gone.
            raise Refused(f"could not connect to {self.url}: {exc}") from None
        self.fed_back = {}
        try:
            async with ws:
                await self.before_metadata(ws)
                metadata = unpack(self._binary(await ws.recv()))
                self.features = list(metadata.get("data", {}).get("features", []) or [])
                if reconnecting:
                    await self.on_reconnect(ws)
                await self.exchange(ws)
        except ConnectionClosed as closed:
            reason = closed.rcvd.reason if closed.rcvd is not None else ""
            if self.on_close(reason) == "exit":
                code = closed.rcvd.code if closed.rcvd is not None else None
                raise PeerClosed(by="peer", code=code, reason=reason) from None

    async def exchange(self, ws: ClientConnection) -> None:
        envs = list(range(self.count))
        while True:
            if self.held_feedback is not None:
                await ws.send(self.encode(self.held_feedback))
                self.held_feedback = None
            await ws.send(self.encode(self.infer_message(envs)))
            frame = await ws.recv()
            if isinstance(frame, str):
                await self.on_text(ws)
                continue
            order, action = self.read_action(unpack(frame), envs)
            feedback = await self.run_chunk(order, action)
            ended = dict(zip(order, feedback["data"]["terminated"].tolist(), strict=True))
            self.held_feedback = self.last_feedback = feedback
            try:
                await ws.send(self.encode(feedback))
                self.held_feedback = None
                self.fed_back.update(ended)
            finally:  # the env resets whether or not its terminal observation got through
                for env, done in ended.items():
                    if done:
                        self.envs.reset(env)

    def _binary(self, frame: bytes | str) -> bytes:
        if isinstance(frame, str):
            raise Malformed("the server sent a text frame", data=frame[:EVIDENCE_BYTES].encode())
        return frame

    async def session(self) -> str:
        """Connect, and reconnect after resyncs, until the server ends the session; why it ended."""
        for attempt in range(MAX_RECONNECTS + 1):
            try:
                await self.connection(reconnecting=attempt > 0)
            except Refused:
                return "refused"
            except PeerClosed:
                return "stop"
            except CodecError:
                raise  # an undecodable frame is no way for a session to end
            except Malformed:
                return "text"
            await asyncio.sleep(RECONNECT_DELAY)
        return "gave up"


async def run_sessions(client_factory: Any, url: str, sessions: int, restart_delay: float) -> int:
    """Fresh sessions, as a person restarting the client would, until the server is gone."""
    ended = "none"
    for index in range(sessions):
        if index:
            await asyncio.sleep(restart_delay)
        ended = await client_factory(url).session()
        print(f"session {index + 1}: {ended}", flush=True)
        if ended == "refused":
            return 0 if index else 1
    return 0 if ended in ("stop", "text") else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-client plugrl")
    parser.add_argument("url", help="the ws:// URL a plugrl-client run announced")
    parser.add_argument("--envs", type=int, default=3, help="probe envs per connection")
    parser.add_argument("--sessions", type=int, default=8, help="sessions to run at most")
    parser.add_argument("--restart-delay", type=float, default=3.0, help="seconds between sessions")
    args = parser.parse_args(argv)
    return asyncio.run(
        run_sessions(lambda url: ReferenceClient(url, args.envs), args.url, args.sessions, args.restart_delay)
    )
