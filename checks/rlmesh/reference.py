"""A conforming rlmesh env server on rlconform's own protos: lanes of a seeded noisy walk.

    rlconform reference-server rlmesh --port 50051 [--host H] [--lanes N] [--step-delay S] [--allow-shutdown]

It answers Handshake for generation `rlmesh-wire-v1` with its contract
(Box(2,) float32 observation [position, count], Discrete(3) int64 action,
`--lanes` lanes, DISABLED autoreset, the `subset_step` capability), serves
one Join session at a time, steps each lane under its own lock so lanes
overlap, honours a step's `timeout_ms` with a recoverable TIMEOUT, answers
bad requests with recoverable errors that echo the request id, reports the
episodes still open on Close, and stops on Shutdown only with
`--allow-shutdown`. Episodes last `EPISODE_LENGTH` steps, one reward each.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import grpc
import numpy as np

from checks.errors import CheckError
from checks.rlmesh.proto import core_pb2, env_pb2, env_pb2_grpc, spaces_pb2
from checks.serving import serve_until_interrupted

GENERATION = "rlmesh-wire-v1"
EPISODE_LENGTH = 5
ACTIONS = 3
LOW, HIGH = -100.0, 100.0
DEMO_LANES = 2
# Long enough for the suite to measure lane overlap and a step deadline, short enough for a quick run.
DEMO_STEP_DELAY = 0.03


def error(code: env_pb2.EnvErrorCode, message: str) -> env_pb2.JoinResponse:
    return env_pb2.JoinResponse(error=env_pb2.EnvError(code=code, message=message, is_recoverable=True))


async def answer_each(
    requests: AsyncIterator[env_pb2.JoinRequest],
    handle: Callable[[env_pb2.JoinRequest], Coroutine[Any, Any, None]],
    out: asyncio.Queue[env_pb2.JoinResponse | None],
) -> None:
    """Hand each request of a Join to `handle` in a task of its own as it arrives, so requests on other lanes
    overlap; once the requests end and every task is done, put None on `out`."""
    tasks: set[asyncio.Task[None]] = set()
    async for request in requests:
        task = asyncio.create_task(handle(request))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        await asyncio.sleep(0)  # let it take its lane locks before the next request arrives
    await asyncio.gather(*tasks)
    await out.put(None)


class BadRequest(CheckError):
    def __init__(self, code: env_pb2.EnvErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Lane:
    """One env lane: its generator, its position, and the episode it is in."""

    generator: np.random.Generator = field(default_factory=np.random.default_rng)
    position: float = 0.0
    count: int = 0
    total: float = 0.0
    episode_id: str = ""
    seed: int | None = None
    started: int = 0
    active: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def reset(self, seed: int | None, episode_id: str) -> None:
        if seed is not None:
            self.generator = np.random.default_rng(seed)
        self.position = float(np.float32(self.generator.uniform(-5, 5)))
        self.count, self.total, self.seed, self.episode_id = 0, 0.0, seed, episode_id
        self.started, self.active = time.time_ns(), True

    def step(self, move: int) -> tuple[float, bool]:
        """(reward, terminated); a lane whose episode ended stays ended (DISABLED autoreset)."""
        if not self.active:
            return 0.0, True
        noise = self.generator.uniform(-0.1, 0.1)
        self.position = float(np.clip(self.position + move + noise, LOW, HIGH))
        self.count += 1
        self.total += 1.0
        return 1.0, self.count >= EPISODE_LENGTH

    def observation(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        return np.array([self.position, self.count], dtype=np.float32)

    def metadata(self, index: int, terminated: bool, truncated: bool) -> env_pb2.EpisodeMetadata:
        episode = env_pb2.EpisodeMetadata(
            episode_id=self.episode_id,
            env_index=index,
            step_count=self.count,
            cumulative_reward=self.total,
            terminated=terminated,
            truncated=truncated,
            start_timestamp_ns=self.started,
            end_timestamp_ns=time.time_ns(),
        )
        if self.seed is not None:
            episode.seed = self.seed
        return episode


def contract(lanes: int) -> core_pb2.EnvContract:
    bounds = spaces_pb2.UniformBounds(low=np.float32(LOW).tobytes(), high=np.float32(HIGH).tobytes())
    box = spaces_pb2.SpaceSpec(shape=[2], dtype=spaces_pb2.DATA_TYPE_FLOAT32, box=spaces_pb2.BoxSpec(uniform=bounds))
    discrete = spaces_pb2.SpaceSpec(dtype=spaces_pb2.DATA_TYPE_INT64, discrete=spaces_pb2.DiscreteSpec(n=ACTIONS))
    return core_pb2.EnvContract(
        spec=core_pb2.EnvSpec(id="ReferenceWalk-v0", action_space=discrete, observation_space=box),
        num_envs=lanes,
        autoreset_mode=core_pb2.AUTORESET_MODE_DISABLED,
    )


class WalkService(env_pb2_grpc.EnvServiceServicer):
    def __init__(self, lanes: int, step_delay: float, allow_shutdown: bool) -> None:
        self.lanes = [Lane() for _ in range(lanes)]
        self.step_delay, self.allow_shutdown = step_delay, allow_shutdown
        self.sessions = 0
        self.stopped = asyncio.Event()

    async def Handshake(self, request: env_pb2.HandshakeRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if not request.HasField("base"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "handshake request missing base")
        generation = request.base.protocol_generation.strip()
        base = core_pb2.HandshakeResponse(
            peer_info=core_pb2.PeerInfo(component="rlconform-reference-env"),
            capabilities={"subset_step": "true"},
            supported_workflow_editions=["2026.06"],
        )
        if generation != GENERATION:
            base.compatible = False
            base.error_message = f"protocol generation {generation} not compatible with {GENERATION}"
            return env_pb2.HandshakeResponse(base=base)
        base.compatible = True
        return env_pb2.HandshakeResponse(base=base, env_contract=contract(len(self.lanes)))

    async def Shutdown(self, request: env_pb2.ShutdownRequest, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if not self.allow_shutdown:
            return env_pb2.ShutdownResponse(base=core_pb2.ShutdownResponse(accepted=False, message="shutdown disabled"))
        self.stopped.set()
        return env_pb2.ShutdownResponse(base=core_pb2.ShutdownResponse(accepted=True, message="shutting down"))

    async def Join(
        self, requests: AsyncIterator[env_pb2.JoinRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[env_pb2.JoinResponse]:
        if self.sessions:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "an active Join session exists")
        self.sessions += 1
        try:
            await context.send_initial_metadata(())
            async for response in self.session(requests):
                yield response
        finally:
            self.sessions -= 1

    async def session(self, requests: AsyncIterator[env_pb2.JoinRequest]) -> AsyncIterator[env_pb2.JoinResponse]:
        """Answer each request as soon as it is done (requests on other lanes overlap); end after Close."""
        session_reset = [False] * len(self.lanes)
        out: asyncio.Queue[env_pb2.JoinResponse | None] = asyncio.Queue()

        async def handle(request: env_pb2.JoinRequest) -> None:
            response = await self.answer(request, session_reset)
            response.request_id = request.request_id
            await out.put(response)

        reader = asyncio.create_task(answer_each(requests, handle, out))
        try:
            while (response := await out.get()) is not None:
                yield response
                if response.WhichOneof("kind") == "close":
                    return
        finally:
            reader.cancel()

    async def answer(self, request: env_pb2.JoinRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        kind = request.WhichOneof("kind")
        try:
            if kind == "reset":
                return await self.reset(request.reset, session_reset)
            if kind == "step":
                return await self.step(request.step, session_reset)
            if kind == "render":
                return self.render(request.render)
            if kind == "configure":
                return env_pb2.JoinResponse(configure=env_pb2.ConfigureEnvResponse())
            if kind == "close":
                return self.close()
            return error(env_pb2.ENV_ERROR_CODE_UNSUPPORTED, "empty or unknown Join request")
        except BadRequest as exc:
            return error(exc.code, str(exc))

    def close(self) -> env_pb2.JoinResponse:
        finals = [lane.metadata(i, False, True) for i, lane in enumerate(self.lanes) if lane.active]
        for lane in self.lanes:
            lane.active = False
        return env_pb2.JoinResponse(close=env_pb2.CloseEnvsResponse(final_episodes=finals))

    def indices(self, requested: Iterable[int], what: str) -> list[int]:
        chosen = list(requested) or list(range(len(self.lanes)))
        if len(set(chosen)) != len(chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{what}: duplicate env_index")
        if any(i >= len(self.lanes) for i in chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{what}: env_index out of range")
        return chosen

    async def locked(self, chosen: list[int], stack: AsyncExitStack) -> None:
        for index in sorted(chosen):  # in one order, so that two requests never wait on each other
            await stack.enter_async_context(self.lanes[index].lock)

    async def reset(self, body: env_pb2.ResetRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        chosen = self.indices(body.env_indices, "partial reset")
        seeds = list(body.seeds)
        if len(seeds) == 1 and len(chosen) > 1 and not body.env_indices:
            seeds = [seeds[0] + i for i in range(len(chosen))]  # one seed seeds every lane, as gymnasium does
        if seeds and len(seeds) != len(chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{len(seeds)} seeds for {len(chosen)} lanes")
        ids = list(body.episode_ids)
        async with AsyncExitStack() as stack:
            await self.locked(chosen, stack)
            for position, lane in enumerate(chosen):
                self.lanes[lane].reset(seeds[position] if seeds else None, ids[position] if position < len(ids) else "")
                session_reset[lane] = True
        return env_pb2.JoinResponse(reset=env_pb2.ResetResponse(observation=self.observe(chosen)))

    def moves(self, body: env_pb2.StepRequest, lanes: int) -> list[int]:
        leaves = list(body.action.leaves) if body.HasField("action") else []
        if len(leaves) != 1 or len(leaves[0]) != 8 * lanes:
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, "action layout does not fit the action space")
        actions = np.frombuffer(leaves[0], dtype="<i8")
        if ((actions < 0) | (actions >= ACTIONS)).any():
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"action outside Discrete({ACTIONS})")
        return [int(action) - 1 for action in actions]

    async def step(self, body: env_pb2.StepRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        chosen = self.indices(body.env_indices, "subset step")
        moves = self.moves(body, len(chosen))
        if not all(session_reset[i] for i in chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_NOT_READY, "reset the lane before stepping it")
        response = env_pb2.StepResponse(env_indices=list(body.env_indices))
        async with AsyncExitStack() as stack:
            await self.locked(chosen, stack)
            deadline = body.timeout_ms / 1000
            if deadline and deadline < self.step_delay:  # give up at the deadline, the lanes untouched
                await asyncio.sleep(deadline)
                raise BadRequest(env_pb2.ENV_ERROR_CODE_TIMEOUT, f"step timed out after {body.timeout_ms} ms")
            await asyncio.sleep(self.step_delay)
            terminated = bytearray()
            for index, move in zip(chosen, moves, strict=True):
                lane = self.lanes[index]
                was_active = lane.active
                reward, done = lane.step(move)
                response.rewards.append(reward)
                terminated.append(1 if done else 0)
                if done and was_active:
                    response.completed_episodes.append(lane.metadata(index, True, False))
                    lane.active = False
            response.terminated_mask = bytes(terminated)
            response.truncated_mask = bytes(len(chosen))
            response.observation.CopyFrom(self.observe(chosen))
        return env_pb2.JoinResponse(step=response)

    def render(self, body: env_pb2.RenderRequest) -> env_pb2.JoinResponse:
        if len(body.env_indices) > 1:
            return error(env_pb2.ENV_ERROR_CODE_UNSUPPORTED, "render one lane at a time")
        if any(i >= len(self.lanes) for i in body.env_indices):
            return error(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, "render lane out of range")
        return env_pb2.JoinResponse(render=env_pb2.RenderResponse())

    def observe(self, chosen: list[int]) -> spaces_pb2.SpaceValue:
        slab = np.stack([self.lanes[i].observation() for i in chosen])
        return spaces_pb2.SpaceValue(leaves=[slab.tobytes()])


class WalkServer:
    """A running reference server: `url` is the "host:port" the rlmesh suite takes."""

    def __init__(self, server: grpc.aio.Server, service: WalkService, url: str) -> None:
        self.server, self.service, self.url = server, service, url
        self.demo_options: dict[str, Any] = {}

    async def close(self) -> None:
        await self.server.stop(grace=0.2)


async def start_reference_server(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    lanes: int = DEMO_LANES,
    step_delay: float = DEMO_STEP_DELAY,
    allow_shutdown: bool = False,
) -> WalkServer:
    """Start serving on `host:port` in the running loop (`port=0`: a free port)."""
    service = WalkService(lanes, step_delay, allow_shutdown)
    server = grpc.aio.server()
    env_pb2_grpc.add_EnvServiceServicer_to_server(service, server)  # type: ignore[no-untyped-call]
    bound = server.add_insecure_port(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    if not bound:
        raise OSError(f"cannot listen on {host}:{port}")
    await server.start()
    return WalkServer(server, service, f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}")


async def start_demo_server(host: str = "127.0.0.1", port: int = 0) -> WalkServer:
    """The walk server as the service's demo runs it (Shutdown refused, so a run cannot stop the demo)."""
    return await start_reference_server(host, port)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server rlmesh", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=50051)
    parser.add_argument("--lanes", type=int, default=DEMO_LANES, help="env lanes served")
    parser.add_argument("--step-delay", type=float, default=DEMO_STEP_DELAY, help="seconds one step takes")
    parser.add_argument("--allow-shutdown", action="store_true", help="stop when a Shutdown call asks")
    args = parser.parse_args(argv)
    if not 1 <= args.lanes <= 256 or not 0 <= args.step_delay <= 10:
        parser.error("--lanes must be 1..256 and --step-delay 0..10 seconds")

    return serve_until_interrupted(
        lambda: start_reference_server(
            args.host, args.port, lanes=args.lanes, step_delay=args.step_delay, allow_shutdown=args.allow_shutdown
        ),
        lambda url: f"rlmesh reference server ({args.lanes} lanes) at {url}",
        until=lambda served: served.service.stopped.wait(),
    )
