"""A small conforming PlugRL training server whose behaviour is split into hooks.

The zoo in `catalogue.py` breaks one hook per server. This core is kept
apart from `checks/plugrl/reference.py` on purpose: when the reference server
changes, the zoo must not move with it.

Protocol facts it follows (PlugRL v1): metadata first, then per connection a
strict infer -> action -> feedback loop; actions are time-major [H, n, da]
with `env_ids` echoed as `<i8` in request order; a protocol error closes that
connection only, with 1001 `plugrl-server-resync`; a run ends with 1001
`plugrl-server-stop`; `reuse-feedback-obs` reuses the last fed-back
observation of an env on this connection unless that feedback ended its
episode; with batching, an infer waits until every connected client has one
queued (SPEC 6).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.zoo.plugrl_server.messages import (
    FEEDBACK_KEYS,
    ProtocolError,
    flag_vector,
    info_rows,
    int_vector,
    observation_rows,
    pack,
    row,
    state_signals,
    unpack,
)

REUSE_FEEDBACK_OBS = "reuse-feedback-obs"
RESYNC = "plugrl-server-resync"
STOP = "plugrl-server-stop"
GOING_AWAY = 1001
FEEDBACK_TIMEOUT = 60.0


class ClientGone(Exception):
    """The client closed while its infer waited for a batch."""


# ---------------------------------------------------------------- the server


@dataclass
class Connection:
    """Per-connection state: envs holding an action and the reuse cache."""

    ws: ServerConnection
    holding: set[int] = field(default_factory=set)
    # env -> its last fed-back observation row, or None when that feedback ended the episode
    cache: dict[int, dict | None] = field(default_factory=dict)
    infers: int = 0
    last_infer: list[int] = field(default_factory=list)
    # one number per row of the last infer, read off its observation (reused rows from the cache)
    signals: list[float] = field(default_factory=list)


@dataclass
class Request:
    connection: Connection
    env_ids: np.ndarray
    answer: asyncio.Future


class ZooServer:
    """A conforming PlugRL server. Subclasses override one hook to break one clause."""

    def __init__(
        self,
        *,
        horizon: int = 4,
        action_dim: int = 3,
        action_dtype: str = "<f4",
        metadata: dict[str, Any] | None = None,
        features: tuple[str, ...] = (REUSE_FEEDBACK_OBS,),
        batching: bool = False,
        stop_after: int | None = None,
        policy_delay: float = 0.0,
        feedback_timeout: float = FEEDBACK_TIMEOUT,
    ) -> None:
        self.horizon = horizon
        self.action_dim = action_dim
        self.action_dtype = np.dtype(action_dtype)
        self.features = features
        self.metadata = self.default_metadata() if metadata is None else metadata
        self.batching = batching
        self.stop_after = stop_after
        self.policy_delay = policy_delay
        self.feedback_timeout = feedback_timeout
        self.connections: dict[ServerConnection, Connection] = {}
        self.pending: list[Request] = []
        self.feedbacks = 0
        self.server: Server | None = None
        self.stopped = asyncio.Event()

    # -- lifecycle

    def serve_options(self) -> dict[str, Any]:
        return {"compression": None, "max_size": None}

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> ZooServer:
        self.server = await serve(self.handle, host, port, ping_interval=None, **self.serve_options())
        return self

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def close(self) -> None:
        for request in self.pending:
            request.answer.cancel()
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5.0)

    async def shut_down(self, code: int, reason: str) -> None:
        """Close every connection with (code, reason) and stop listening."""
        self.stopped.set()
        assert self.server is not None
        self.server.close(close_connections=False)
        await asyncio.gather(*(ws.close(code, reason) for ws in list(self.connections)), return_exceptions=True)

    # -- hooks a fault may override

    def default_metadata(self) -> dict[str, Any]:
        return {
            "protocol_version": 1,
            "server": "rlconform-zoo",
            "action_horizon": self.horizon,
            "action_dim": self.action_dim,
            "features": list(self.features),
        }

    async def greet(self, connection: Connection) -> None:
        await connection.ws.send(pack({"message_type": "metadata", "data": self.metadata}))

    def action(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        """The chunk, time-major [H, n, da]: each env's values follow its observation, step and dimension.

        The checker's observations put env e at a signal of e / 4, so float values read
        0.SED (step, env, dimension) and integer ones stay within |u1.
        """
        steps = np.arange(self.horizon).reshape(-1, 1, 1)
        signals = connection.signals if len(connection.signals) == len(env_ids) else [0.0] * len(env_ids)
        envs = np.asarray(signals, dtype=np.float64).reshape(1, -1, 1) * 40
        dims = np.arange(self.action_dim).reshape(1, 1, -1)
        if self.action_dtype.kind in "iu":
            return (steps * 50 + np.rint(envs) + dims).astype(self.action_dtype)
        return ((steps * 100 + envs + dims) / 1000.0).astype(self.action_dtype)

    def action_message(self, connection: Connection, env_ids: np.ndarray, action: np.ndarray) -> Any:
        return {
            "message_type": "action",
            "data": {"env_ids": np.asarray(env_ids, dtype="<i8"), "action": action},
        }

    def encode(self, message: Any) -> bytes:
        return pack(message)

    async def on_protocol_error(self, connection: Connection, error: ProtocolError) -> None:
        await connection.ws.close(GOING_AWAY, RESYNC)

    def check_reuse(self, connection: Connection, env_ids: np.ndarray, reuse: np.ndarray) -> None:
        for env, reused in zip(env_ids.tolist(), reuse.tolist(), strict=False):
            if reused and self.reusable(connection, env) is None:
                raise ProtocolError("reuse", f"env {env} has no observation to reuse")

    def reusable(self, connection: Connection, env: int) -> dict | None:
        """The observation a reuse of `env` stands for, None when there is none to reuse."""
        return connection.cache.get(env)

    def remember(self, connection: Connection, env: int, obs: dict | None) -> None:
        connection.cache[env] = obs

    def check_feedback_envs(self, connection: Connection, env_ids: np.ndarray) -> None:
        """A feedback may name any envs; ones holding no action are dropped (SPEC 7.6)."""

    def check_batch_size(self, connection: Connection, n: int) -> None:
        """Any n is fine (ragged batches are normal)."""

    async def next_feedback(self, connection: Connection) -> bytes | str:
        return await asyncio.wait_for(connection.ws.recv(), self.feedback_timeout)

    async def on_feedback_timeout(self, connection: Connection) -> None:
        await connection.ws.close(GOING_AWAY, "Feedback timeout")

    # -- the connection loop

    async def handle(self, ws: ServerConnection) -> None:
        connection = Connection(ws)
        self.connections[ws] = connection
        try:
            await self.greet(connection)
            while True:
                try:
                    await self.exchange(connection)
                except ProtocolError as error:
                    await self.on_protocol_error(connection, error)
                    return
                except TimeoutError:
                    await self.on_feedback_timeout(connection)
                    return
        except (ConnectionClosed, ClientGone):
            pass
        finally:
            self.forget(connection)

    def forget(self, connection: Connection) -> None:
        """A closed connection no longer counts as a connected client."""
        self.connections.pop(connection.ws, None)
        self.pending = [r for r in self.pending if r.connection is not connection]
        self.flush_if_ready()

    async def exchange(self, connection: Connection) -> None:
        """One infer -> action -> feedback cycle."""
        env_ids = self.read_infer(connection, unpack(await connection.ws.recv()))
        connection.infers += 1
        connection.last_infer = env_ids.tolist()
        action = await self.infer(connection, env_ids)
        await connection.ws.send(self.encode(self.action_message(connection, env_ids, action)))
        connection.holding.update(env_ids.tolist())
        await self.read_feedback(connection, await self.next_feedback(connection))

    def read_infer(self, connection: Connection, message: dict) -> np.ndarray:
        if message.get("message_type") != "infer":
            raise ProtocolError("type", f"expected an infer, got {message.get('message_type')!r}")
        missing = {"data", "env_indices", "step_ids"} - set(message)
        if missing:
            raise ProtocolError("infer", f"the infer lacks {sorted(missing)}")
        env_ids = int_vector(message["env_indices"], "env_indices", "infer")
        n = len(env_ids)
        if n == 0 or len(set(env_ids.tolist())) != n:
            raise ProtocolError("infer", "env_indices is empty or repeats an env")
        int_vector(message["step_ids"], "step_ids", "infer", n)
        self.check_batch_size(connection, n)
        reused = [False] * n
        if "reuse" in message:
            if REUSE_FEEDBACK_OBS not in self.features:
                raise ProtocolError("reuse", "reuse sent but the feature is not offered")
            reuse = flag_vector(message["reuse"], "reuse", n, "reuse")
            self.check_reuse(connection, env_ids, reuse)
            reused = reuse.tolist()
        self.check_observation_rows(message["data"], n - sum(reused), "reuse" if "reuse" in message else "infer")
        sent = iter(state_signals(message["data"]))
        connection.signals = [
            self.reused_signal(connection, env) if flag else next(sent, 0.0)
            for env, flag in zip(env_ids.tolist(), reused, strict=False)
        ]
        return env_ids

    def reused_signal(self, connection: Connection, env: int) -> float:
        held = self.reusable(connection, env)
        return (state_signals(held) or [0.0])[0] if held is not None else 0.0

    def check_observation_rows(self, obs: Any, rows: int, kind: str) -> None:
        """An infer's observation has one row per env it does not reuse."""
        found = observation_rows(obs, kind)
        if found is not None and found != rows:
            raise ProtocolError(kind, f"the observation has {found} rows, expected {rows}")

    async def infer(self, connection: Connection, env_ids: np.ndarray) -> np.ndarray:
        if not self.batching:
            if self.policy_delay:
                await asyncio.sleep(self.policy_delay)
            return self.action(connection, env_ids)
        request = Request(connection, env_ids, asyncio.get_running_loop().create_future())
        self.pending.append(request)
        self.flush_if_ready()
        # A client that leaves while queued must stop counting as connected.
        gone = asyncio.ensure_future(connection.ws.wait_closed())
        try:
            await asyncio.wait({request.answer, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not request.answer.done():
            raise ClientGone()
        return request.answer.result()

    def flush_if_ready(self) -> None:
        """Batching (SPEC 6): answer once every connected client has an infer queued."""
        if not self.pending or len(self.pending) < len(self.connections):
            return
        batch, self.pending = self.pending, []
        asyncio.get_running_loop().create_task(self.answer_batch(batch))

    async def answer_batch(self, batch: list[Request]) -> None:
        if self.policy_delay:
            await asyncio.sleep(self.policy_delay)
        for request in batch:
            if not request.answer.done():
                request.answer.set_result(self.action(request.connection, request.env_ids))

    async def read_feedback(self, connection: Connection, frame: bytes | str) -> None:
        message = unpack(frame)
        if message.get("message_type") != "feedback":
            raise ProtocolError("sequence", f"expected a feedback, got {message.get('message_type')!r}")
        if {"data", "env_indices", "step_ids"} - set(message):
            raise ProtocolError("feedback", "the feedback lacks a key")
        env_ids = int_vector(message["env_indices"], "env_indices", "feedback")
        m = len(env_ids)
        int_vector(message["step_ids"], "step_ids", "feedback", m)
        data = message["data"]
        if not isinstance(data, dict) or set(data) != FEEDBACK_KEYS:
            raise ProtocolError("feedback", "feedback data does not have exactly its five keys")
        rewards = data["rewards"]
        if not isinstance(rewards, np.ndarray) or rewards.dtype.kind != "f" or rewards.shape != (m,):
            raise ProtocolError("feedback", f"rewards is not a float array of length {m}")
        done = flag_vector(data["terminated"], "terminated", m) | flag_vector(data["truncated"], "truncated", m)
        found = observation_rows(data["obs"], "feedback")
        if found is not None and found != m:
            raise ProtocolError("feedback", f"obs has {found} rows, expected {m}")
        self.check_info(data["info"], m)
        self.check_feedback_envs(connection, env_ids)
        for index, env in enumerate(env_ids.tolist()):
            if env not in connection.holding:
                continue  # feedback for an env holding no action is dropped (SPEC 7.6)
            connection.holding.discard(env)
            self.remember(connection, env, None if done[index] else row(data["obs"], index))
        await self.count_feedback()

    def check_info(self, info: Any, m: int) -> None:
        if isinstance(info, dict) and info and info_rows(info) != m:
            raise ProtocolError("info", f"info does not split into {m} entries")
        if not isinstance(info, dict):
            raise ProtocolError("feedback", "info is not a map")

    async def count_feedback(self) -> None:
        self.feedbacks += 1
        if self.stop_after is not None and self.feedbacks >= self.stop_after and not self.stopped.is_set():
            await self.end_run()

    async def end_run(self) -> None:
        await self.shut_down(GOING_AWAY, STOP)


@contextlib.asynccontextmanager
async def running(factory: Callable[..., ZooServer], **options: Any) -> AsyncIterator[ZooServer]:
    """A started server on 127.0.0.1 and a free port, closed on the way out whatever happened."""
    server = factory(**options)
    await server.start()
    try:
        yield server
    finally:
        await server.close()
