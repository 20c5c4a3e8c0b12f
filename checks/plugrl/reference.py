"""A conforming PlugRL training server with a fixed linear policy: the suite's known-good target.

    rlconform reference-server plugrl --port 8000 [--host H] [--batching] [--stop-after N]
        [--horizon H] [--action-dim D] [--no-features] [--policy-delay S] [--feedback-timeout S]

It speaks first with metadata, answers each infer with a time-major
[H, n, action_dim] float32 action whose env_ids echo the request, validates
every message (closing with 1001 `plugrl-server-resync` on a protocol error,
leaving other connections alone), honours `reuse-feedback-obs` when listed,
closes a connection whose feedback is 60 s late (`--feedback-timeout`), and with `--stop-after N`
ends the run after N feedback rows by closing every connection with 1001
`plugrl-server-stop`. With `--batching` it infers for all connections at
once, waiting for one queued infer per connected client (SPEC 6), at most
`INFER_READY_TIMEOUT` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
from typing import Any

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from checks.core import HARNESS_VERSION
from checks.errors import Malformed
from checks.plugrl.codec import EVIDENCE_BYTES, pack, unpack
from checks.plugrl.protocol import (
    FEEDBACK_TIMEOUT,
    FEEDBACK_TIMEOUT_REASON,
    GOING_AWAY,
    RESYNC_REASON,
    REUSE_FEATURE,
    STOP_REASON,
)
from checks.plugrl.validation import ReuseCache, check_feedback, check_infer

INFER_READY_TIMEOUT = 5.0


class LinearPolicy:
    """A fixed, seeded policy: each env's chunk is a function of its own observation row.

    Deterministic, so the suite can check that action rows follow their envs;
    computed env-major and sent time-major, like a real server.
    """

    def __init__(self, horizon: int, action_dim: int, delay: float) -> None:
        self.horizon, self.action_dim, self.delay = horizon, action_dim, delay
        weights = np.random.default_rng(0).normal(size=(2, horizon, action_dim))
        self.scale, self.offset = weights[0], weights[1]

    async def act(self, features: np.ndarray) -> np.ndarray:
        if self.delay:
            await asyncio.sleep(self.delay)
        env_major: np.ndarray = np.tanh(features[:, None, None] * self.scale + self.offset).astype(np.float32)
        return env_major.transpose(1, 0, 2)


class Batcher:
    """One policy batch for all connections: ready when every connected client has queued an infer."""

    def __init__(self, policy: LinearPolicy, ready_timeout: float = INFER_READY_TIMEOUT) -> None:
        self.policy = policy
        self.ready_timeout = ready_timeout
        self.connected: set[int] = set()
        self.queued: dict[int, tuple[np.ndarray, asyncio.Future[np.ndarray]]] = {}
        self.oldest = 0.0
        self.changed = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._schedule())

    def join(self, client: int) -> None:
        self.connected.add(client)
        self.changed.set()

    def leave(self, client: int) -> None:
        self.connected.discard(client)
        entry = self.queued.pop(client, None)
        if entry is not None:
            entry[1].cancel()
        self.changed.set()

    async def act(self, client: int, features: np.ndarray) -> np.ndarray:
        loop = asyncio.get_running_loop()
        if not self.queued:
            self.oldest = loop.time()
        future: asyncio.Future[np.ndarray] = loop.create_future()
        self.queued[client] = (features, future)
        self.changed.set()
        return await future

    async def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self.changed.clear()
            if self.queued:
                left = self.oldest + self.ready_timeout - loop.time()
                if self.connected <= set(self.queued) or left <= 0:
                    await self._run_batch()
                    continue
                try:
                    await asyncio.wait_for(self.changed.wait(), timeout=left)
                except TimeoutError:
                    pass
            else:
                await self.changed.wait()

    async def _run_batch(self) -> None:
        batch, self.queued = self.queued, {}
        actions = await self.policy.act(np.concatenate([features for features, _ in batch.values()]))
        start = 0
        for features, future in batch.values():
            n = len(features)
            if not future.done():
                future.set_result(actions[:, start : start + n])
            start += n

    def close(self) -> None:
        self.task.cancel()


class ReferenceServer:
    """A running reference server. `stopped` is set once it has ended the run."""

    def __init__(
        self,
        *,
        horizon: int,
        action_dim: int,
        batching: bool,
        stop_after: int | None,
        features: tuple[str, ...],
        policy_delay: float,
        feedback_timeout: float = FEEDBACK_TIMEOUT,
    ) -> None:
        self.policy = LinearPolicy(horizon, action_dim, policy_delay)
        self.feedback_timeout = feedback_timeout
        self.batcher = Batcher(self.policy) if batching else None
        self.stop_after = stop_after
        self.features = tuple(features)
        self.feedback_rows = 0
        self.stopped = asyncio.Event()
        self.connections: set[ServerConnection] = set()
        self.server: Server | None = None
        self.host = ""
        self.port = 0
        self._ids = itertools.count()

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def metadata(self) -> dict[str, Any]:
        return {
            "protocol_version": 1,
            "server": "rlconform-reference",
            "server_version": HARNESS_VERSION,
            "algorithm": "none",
            "policy": type(self.policy).__name__,
            "action_horizon": self.policy.horizon,
            "action_dim": self.policy.action_dim,
            "features": list(self.features),
        }

    async def handle(self, ws: ServerConnection) -> None:
        client = next(self._ids)
        self.connections.add(ws)
        if self.batcher is not None:
            self.batcher.join(client)
        try:
            await ws.send(pack({"message_type": "metadata", "data": self.metadata()}))
            await self._cycles(ws, client)
        except Malformed:  # a CodecError too
            await ws.close(GOING_AWAY, RESYNC_REASON)
        except ConnectionClosed:
            pass
        finally:
            self.connections.discard(ws)
            if self.batcher is not None:
                self.batcher.leave(client)

    async def _cycles(self, ws: ServerConnection, client: int) -> None:
        cache = ReuseCache()
        reuse_offered = REUSE_FEATURE in self.features
        while True:
            envs, features = check_infer(_decode(await ws.recv()), reuse_offered, cache)
            if self.batcher is not None:
                action = await self.batcher.act(client, features)
            else:
                action = await self.policy.act(features)
            env_ids = np.asarray(envs, dtype="<i8")
            await ws.send(pack({"message_type": "action", "data": {"env_ids": env_ids, "action": action}}))
            try:
                frame = await asyncio.wait_for(ws.recv(), self.feedback_timeout)
            except TimeoutError:
                await ws.close(GOING_AWAY, FEEDBACK_TIMEOUT_REASON)
                return
            fed, terminated, truncated, fed_features = check_feedback(_decode(frame))
            # Feedback for an env that holds no action here is dropped (SPEC 7.6).
            holding = [i for i, env in enumerate(fed) if env in envs]
            cache.remember([fed[i] for i in holding], terminated[holding], truncated[holding], fed_features[holding])
            self.feedback_rows += len(fed)
            if self.stop_after is not None and self.feedback_rows >= self.stop_after:
                await self.stop()
                return

    async def stop(self) -> None:
        """End the run: every connection is closed with 1001 plugrl-server-stop."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        await asyncio.gather(
            *(ws.close(GOING_AWAY, STOP_REASON) for ws in list(self.connections)), return_exceptions=True
        )
        if self.server is not None:
            self.server.close(close_connections=False)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
        if self.batcher is not None:
            self.batcher.close()


def _decode(frame: bytes | str) -> dict[str, Any]:
    if isinstance(frame, str):
        raise Malformed("a text frame", data=frame[:EVIDENCE_BYTES].encode())
    return unpack(frame, max_size=len(frame))


async def start_reference_server(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    horizon: int = 4,
    action_dim: int = 3,
    batching: bool = False,
    stop_after: int | None = None,
    features: tuple[str, ...] = (REUSE_FEATURE,),
    policy_delay: float = 0.0,
    feedback_timeout: float = FEEDBACK_TIMEOUT,
) -> ReferenceServer:
    """Start listening and return at once; `port=0` takes a free port from the OS."""
    reference = ReferenceServer(
        horizon=horizon,
        action_dim=action_dim,
        batching=batching,
        stop_after=stop_after,
        features=features,
        policy_delay=policy_delay,
        feedback_timeout=feedback_timeout,
    )
    # SPEC 1.1: no compression and no frame size cap.
    reference.server = await serve(reference.handle, host, port, compression=None, max_size=None)
    reference.host, reference.port = next(iter(reference.server.sockets)).getsockname()[:2]
    return reference


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server plugrl", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--horizon", type=int, default=4)
    parser.add_argument("--action-dim", type=int, default=3)
    parser.add_argument("--batching", action="store_true", help="one policy batch across connections")
    parser.add_argument("--stop-after", type=int, help="end the run after this many feedback rows")
    parser.add_argument("--no-features", action="store_true", help="list no features (no reuse-feedback-obs)")
    parser.add_argument("--policy-delay", type=float, default=0.0, help="seconds each policy batch takes")
    parser.add_argument(
        "--feedback-timeout",
        type=float,
        default=FEEDBACK_TIMEOUT,
        help="seconds to wait for a feedback before closing with 1001 Feedback timeout",
    )
    args = parser.parse_args(argv)
    if args.horizon < 1 or args.action_dim < 1:
        parser.error("--horizon and --action-dim must be at least 1")
    if not 0 < args.feedback_timeout <= 86400:
        parser.error("--feedback-timeout must be positive seconds, at most a day")

    async def run() -> None:
        reference = await start_reference_server(
            args.host,
            args.port,
            horizon=args.horizon,
            action_dim=args.action_dim,
            batching=args.batching,
            stop_after=args.stop_after,
            features=() if args.no_features else (REUSE_FEATURE,),
            policy_delay=args.policy_delay,
            feedback_timeout=args.feedback_timeout,
        )
        print(f"PlugRL reference server listening on {reference.url}", flush=True)
        try:
            await reference.stopped.wait()
        finally:
            await reference.close()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0
