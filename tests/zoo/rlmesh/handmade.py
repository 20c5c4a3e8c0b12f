"""A small hand-written rlmesh env server on rlconform's own protos, for faults `rlmesh` cannot produce.

With no faults it is a conforming lane server: N lanes of a seeded noisy walk
(Box(2,) float32 observation [position, count], Discrete(3) action, episodes of
`EPISODE_LENGTH` steps, DISABLED autoreset, `subset_step`), one lock per lane so
lanes overlap, a step `timeout_ms` honoured with a recoverable TIMEOUT, and
recoverable errors where the protocol asks for them. Each fault in FAULTS (faults.py) breaks
exactly one thing (catalogue.py names the clause that must catch it); each of VARIANTS is
legal but unusual, and must pass everything.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import numpy as np

from checks.rlmesh.proto import core_pb2, env_pb2, env_pb2_grpc, spaces_pb2
from checks.rlmesh.reference import answer_each
from tests.zoo.rlmesh.faults import (
    FAULTS,
    HOSTILE,
    HUGE_REPLY,
    LIFO_WINDOW,
    NOT_PROTOBUF,
    RAW_FAULTS,
    SLOW_REPLY,
    SLOW_STEP,
    VARIANTS,
    lane_warning_infos,
)

__all__ = ["FAULTS", "HOSTILE", "HUGE_REPLY", "SLOW_REPLY", "VARIANTS", "start"]

GENERATION = "rlmesh-wire-v1"
EPISODE_LENGTH = 5
ACTIONS = 3
LOW, HIGH = -100.0, 100.0
UNDECLARED_HANDSHAKE_FIELD = b"\x32\x072026.06"  # tag 6, a string, as 0.1.0 sends
UNDECLARED_RESPONSE_FIELDS = b"\x58\x07\x60\x80\x01\x78\x03"  # varints at tags 11, 12 and 15 (timings)


def error(code: int, message: str, recoverable: bool = True) -> env_pb2.JoinResponse:
    return env_pb2.JoinResponse(error=env_pb2.EnvError(code=code, message=message, is_recoverable=recoverable))


class BadRequest(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Fatal(BadRequest):
    """A non-recoverable error."""


class BadAction(BadRequest):
    def __init__(self, message: str) -> None:
        super().__init__(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, message)


class Lane:
    def __init__(self, generator: list[np.random.Generator], faults: frozenset[str] = frozenset()) -> None:
        self.faults = faults
        self.generator = generator  # a one-item holder, so that lanes can (wrongly) share it
        self.pending = False  # ended under NEXT_STEP: the next step autoresets
        self.position = 0.0
        self.count = 0
        self.episode_id = ""
        self.seed: int | None = None
        self.total = 0.0
        self.started = 0
        self.active = False

    def reset(self, seed: int | None, episode_id: str, seed_offset: int = 0) -> None:
        if seed is not None:
            self.generator[0] = np.random.default_rng(seed + seed_offset)
        elif "unseeded-reset-reseeds" in self.faults:
            self.generator[0] = np.random.default_rng()
        start = self.generator[0].uniform(-5, 5)
        self.position = 0.0 if "seed-ignored-at-start" in self.faults else float(np.float32(start))
        self.count, self.total, self.seed, self.episode_id = 0, 0.0, seed, episode_id
        self.started, self.active, self.pending = time.time_ns(), True, False

    def step(self, move: int) -> tuple[float, bool]:
        if not self.active:  # ended under DISABLED: it stays ended
            return 0.0, True
        noise = self.generator[0].uniform(-0.1, 0.1)
        self.position = float(np.clip(self.position + move + noise, LOW, HIGH))
        self.count += 1
        self.total += 1.0
        return 1.0, self.count >= EPISODE_LENGTH

    def observation(self) -> np.ndarray:
        return np.array([self.position, self.count], dtype=np.float32)

    def metadata(self, index: int, terminated: bool, truncated: bool, extra_steps: int = 0) -> env_pb2.EpisodeMetadata:
        episode = env_pb2.EpisodeMetadata(
            episode_id=self.episode_id,
            env_index=index,
            step_count=self.count + extra_steps,
            cumulative_reward=self.total,
            terminated=terminated,
            truncated=truncated,
            start_timestamp_ns=self.started,
            end_timestamp_ns=time.time_ns(),
        )
        if self.seed is not None:
            episode.seed = self.seed
        return episode


class HandmadeEnvService(env_pb2_grpc.EnvServiceServicer):
    def __init__(self, lanes: int, faults: set[str], step_delay: float, allow_shutdown: bool) -> None:
        unknown = faults - set(FAULTS) - set(VARIANTS) - set(HOSTILE)
        if unknown:
            raise ValueError(f"unknown faults {unknown}")
        self.faults = faults
        shared = [np.random.default_rng()]
        lane_faults = frozenset(faults)
        self.lanes = [
            Lane(shared if "shared-rng" in faults else [np.random.default_rng()], lane_faults) for _ in range(lanes)
        ]
        self.lifo_waiting = 0  # pipelined-lifo: steps waiting before their lane lock
        self.probed = False  # refuses-join-after-probe: an empty JoinRequest was seen
        self.sulking = False  # sulks-after-bad-action: the last request was a rejected action
        self.first_action = -1 if "offset-actions" in faults else 0
        self.next_step = bool(faults & {"next-step", "autoreset-reward"})
        self.locks = [asyncio.Lock() for _ in range(lanes)]
        self.global_lock = asyncio.Lock()
        self.step_delay = step_delay or (SLOW_STEP if "slow-steps" in faults else 0.0)
        self.allow_shutdown = allow_shutdown
        self.sessions = 0
        self.stopped = asyncio.Event()

    # -- unary calls

    def contract(self) -> core_pb2.EnvContract:
        box = spaces_pb2.SpaceSpec(
            shape=[2],
            dtype=spaces_pb2.DATA_TYPE_FLOAT32,
            box=spaces_pb2.BoxSpec(
                uniform=spaces_pb2.UniformBounds(low=np.float32(LOW).tobytes(), high=np.float32(HIGH).tobytes())
            ),
        )
        if "impossible-shape" in self.faults:
            box.shape[:] = [2**62 + 1, 4]  # its element count wraps to 4 in 64-bit arithmetic
        discrete = spaces_pb2.SpaceSpec(
            dtype=spaces_pb2.DATA_TYPE_INT64, discrete=spaces_pb2.DiscreteSpec(n=ACTIONS, start=self.first_action)
        )
        mode = core_pb2.AUTORESET_MODE_NEXT_STEP if self.next_step else core_pb2.AUTORESET_MODE_DISABLED
        if "unspecified-autoreset" in self.faults:
            mode = core_pb2.AUTORESET_MODE_UNSPECIFIED
        spec = core_pb2.EnvSpec(id="HandmadeWalk-v0", action_space=discrete, observation_space=box)
        if "declares-step-limit" in self.faults:
            spec.metadata.entries["max_episode_steps"].int_value = EPISODE_LENGTH
        if "drifting-contract" in self.faults:
            self.handshakes = getattr(self, "handshakes", 0) + 1
            spec.metadata.entries["handshakes"].int_value = self.handshakes
        return core_pb2.EnvContract(
            spec=spec,
            num_envs=0 if "zero-lanes" in self.faults else len(self.lanes),
            autoreset_mode=mode,
        )

    async def Handshake(self, request, context):
        if not request.HasField("base") and "accepts-missing-base" not in self.faults:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "handshake request missing base")
        generation = request.base.protocol_generation.strip()
        base = core_pb2.HandshakeResponse(
            peer_info=core_pb2.PeerInfo(component="" if "no-peer-info" in self.faults else "handmade-env"),
            capabilities={"subset_step": "true"},
            supported_workflow_editions=["2026.06"],
        )
        if generation != GENERATION and "any-generation" not in self.faults:
            base.compatible = False
            base.error_message = f"protocol generation {generation} not compatible with {GENERATION}"
            return env_pb2.HandshakeResponse(base=base)
        base.compatible = True
        if "unknown-fields" in self.faults:
            base.MergeFromString(UNDECLARED_HANDSHAKE_FIELD)
        return env_pb2.HandshakeResponse(base=base, env_contract=self.contract())

    async def Shutdown(self, request, context):
        if not self.allow_shutdown and "never-stops" not in self.faults:
            return env_pb2.ShutdownResponse(base=core_pb2.ShutdownResponse(accepted=False, message="shutdown disabled"))
        if "never-stops" not in self.faults:
            self.stopped.set()
        return env_pb2.ShutdownResponse(base=core_pb2.ShutdownResponse(accepted=True, message="shutting down"))

    # -- the Join stream

    async def admit(self, context) -> None:
        """Refuse a Join the way the protocol asks (or, under a fault, the way it does not)."""
        if self.sessions and "double-sessions" not in self.faults:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "an active Join session exists")
        if self.probed and not self.sessions and "refuses-join-after-probe" in self.faults:
            self.probed = False
            await context.abort(grpc.StatusCode.UNAVAILABLE, "worker restarting")

    async def Join(self, request_iterator, context):
        await self.admit(context)
        self.sessions += 1
        await context.send_initial_metadata(())
        if "join-ends-at-once" in self.faults:
            self.sessions -= 1
            return
        session_reset = [False] * len(self.lanes)
        out: asyncio.Queue = asyncio.Queue()

        async def handle(request: env_pb2.JoinRequest) -> None:
            deadline_ms = request.step.timeout_ms if request.WhichOneof("kind") == "step" else 0
            if "pipelined-lifo" in self.faults and request.WhichOneof("kind") == "step" and request.step.env_indices:
                self.lifo_waiting += 1
                await asyncio.sleep(LIFO_WINDOW / self.lifo_waiting)  # later arrivals wait less
                self.lifo_waiting -= 1
            if "answers-after-timeout" in self.faults and 0 < deadline_ms < self.step_delay * 1000:
                await asyncio.sleep(deadline_ms / 1000)
                timed_out = error(env_pb2.ENV_ERROR_CODE_TIMEOUT, f"step timed out after {deadline_ms} ms")
                timed_out.request_id = request.request_id
                await out.put(timed_out)
                request.step.timeout_ms = 0  # and then step all the same, and answer that too
            response = await self.answer(request, session_reset)
            if "wrong-echo" not in self.faults or response.WhichOneof("kind") != "error":
                response.request_id = request.request_id
            if "unknown-fields" in self.faults:
                response.MergeFromString(UNDECLARED_RESPONSE_FIELDS)
            await out.put(response)

        reader = asyncio.create_task(answer_each(request_iterator, handle, out))
        try:
            while True:
                response = await out.get()
                if response is None:
                    return
                if "slow-replies" in self.faults:
                    await asyncio.sleep(SLOW_REPLY)
                if "huge-reply" in self.faults and response.WhichOneof("kind") == "step":
                    response.step.observation.leaves[0] = bytes(HUGE_REPLY)
                yield response
                fatal = response.WhichOneof("kind") == "error" and not response.error.is_recoverable
                if response.WhichOneof("kind") == "close" or (fatal and "fatal-stays-open" not in self.faults):
                    return
        finally:
            reader.cancel()
            if "slot-leak" not in self.faults:
                self.sessions -= 1

    async def answer(self, request: env_pb2.JoinRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        kind = request.WhichOneof("kind")
        try:
            if kind == "reset":
                return await self.reset(request.reset, session_reset)
            if kind == "step":
                return await self.step(request.step, session_reset)
            if kind == "render":
                return self.render(request.render)
            if kind == "close":
                finals = (
                    []
                    if "forgets-on-close" in self.faults
                    else [lane.metadata(i, False, True) for i, lane in enumerate(self.lanes) if lane.active]
                )
                for lane in self.lanes:
                    lane.active = False
                return env_pb2.JoinResponse(close=env_pb2.CloseEnvsResponse(final_episodes=finals))
            if kind == "configure" and "ignores-configure" not in self.faults:
                return env_pb2.JoinResponse(configure=env_pb2.ConfigureEnvResponse())
            self.probed = kind is None
            if kind is None and "empty-request-invalid" in self.faults:
                return error(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, "empty Join request")
            return error(env_pb2.ENV_ERROR_CODE_UNSUPPORTED, "empty or unknown Join request")
        except BadAction as exc:
            self.sulking = "sulks-after-bad-action" in self.faults
            if "fatal-bad-action" in self.faults:
                return error(env_pb2.ENV_ERROR_CODE_INTERNAL, str(exc), recoverable=False)
            return error(exc.code, str(exc))
        except BadRequest as exc:
            return error(exc.code, str(exc), recoverable=not isinstance(exc, Fatal))

    def indices(self, requested, width_name: str) -> list[int]:
        chosen = list(requested) or list(range(len(self.lanes)))
        if len(set(chosen)) != len(chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{width_name}: duplicate env_index")
        if any(i >= len(self.lanes) for i in chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{width_name}: env_index out of range")
        return chosen

    def locked(self, chosen: list[int]):
        return _Locks([self.global_lock] if "serial-lanes" in self.faults else [self.locks[i] for i in sorted(chosen)])

    async def reset(self, body: env_pb2.ResetRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        if "out-of-range-reset-ok" in self.faults and any(i >= len(self.lanes) for i in body.env_indices):
            return env_pb2.JoinResponse(reset=env_pb2.ResetResponse())
        chosen = self.indices(body.env_indices, "partial reset")
        seeds: list[int | None] = list(body.seeds)
        if "extra-seeds-dropped" in self.faults:
            seeds = seeds[: len(chosen)]
        if len(seeds) == 1 and len(chosen) > 1 and not body.env_indices:
            first = seeds[0]
            assert first is not None
            if "one-seed-one-lane" in self.faults:
                seeds = [first] + [None] * (len(chosen) - 1)
            else:
                seeds = [first + i for i in range(len(chosen))]  # one seed seeds every lane, as gymnasium does
        if seeds and len(seeds) != len(chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{len(seeds)} seeds for {len(chosen)} lanes")
        async with self.locked(chosen):
            for position, lane in enumerate(chosen):
                ids = list(body.episode_ids)
                offset = 1 if "partial-reset-off-by-one" in self.faults and body.env_indices else 0
                episode_id = ids[position] if position < len(ids) else ""
                self.lanes[lane].reset(seeds[position] if seeds else None, episode_id, offset)
                session_reset[lane] = True
        return env_pb2.JoinResponse(reset=env_pb2.ResetResponse(observation=self.observe(chosen)))

    async def step(self, body: env_pb2.StepRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        if self.sulking:
            self.sulking = False
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INTERNAL, "still upset about the last action")
        try:
            return await self.checked_step(body, session_reset)
        except BadAction:
            if "bad-action-moves" in self.faults:
                for lane in self.lanes:
                    lane.generator[0].uniform(-0.1, 0.1)
            raise

    async def checked_step(self, body: env_pb2.StepRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        chosen = self.indices(body.env_indices, "subset step")
        leaves = list(body.action.leaves) if body.HasField("action") else []
        if len(leaves) != 1 or len(leaves[0]) != 8 * len(chosen):
            raise BadAction("action layout does not fit the action space")
        actions = np.frombuffer(leaves[0], dtype="<i8")
        if "accepts-any-action" in self.faults:
            actions = np.clip(actions, self.first_action, self.first_action + ACTIONS - 1)
        if ((actions < self.first_action) | (actions >= self.first_action + ACTIONS)).any():
            raise BadAction(f"action outside Discrete({ACTIONS}, start={self.first_action})")
        moves = actions - self.first_action - 1
        if "wide-subset" in self.faults:
            chosen, moves = list(range(len(self.lanes))), np.resize(moves, len(self.lanes))
        if "sorted-subset" in self.faults:
            chosen = sorted(chosen)
        if not all(session_reset[i] for i in chosen):
            raise self.not_ready()
        echoed = list(range(len(self.lanes))) if "indices-on-full-step" in self.faults else []
        response = env_pb2.StepResponse(env_indices=list(body.env_indices) if body.env_indices else echoed)
        async with self.locked(chosen):
            if self.step_delay:
                deadline = body.timeout_ms / 1000 if "ignores-timeout" not in self.faults else 0
                if deadline and deadline < self.step_delay:  # give up at the deadline, the env untouched
                    await asyncio.sleep(deadline)
                    raise BadRequest(env_pb2.ENV_ERROR_CODE_TIMEOUT, f"step timed out after {body.timeout_ms} ms")
                await asyncio.sleep(self.step_delay)
            terminated = bytearray()
            both = "both-flags" in self.faults
            pushed = list(body.episode_ids)
            for lane, move in zip(chosen, moves, strict=False):
                state = self.lanes[lane]
                if state.pending:  # NEXT_STEP: this step starts the lane's next episode, under the pushed id
                    state.reset(None, pushed[lane] if lane < len(pushed) else "")
                    response.rewards.append(1.0 if "autoreset-reward" in self.faults else 0.0)
                    terminated.append(0)
                    continue
                was_active = state.active
                reward, done = state.step(int(move))
                response.rewards.append(reward)
                terminated.append(1 if done else 0)
                if done and was_active:
                    extra = 1 if "off-by-one-steps" in self.faults else 0
                    response.completed_episodes.append(state.metadata(lane, True, both, extra))
                    state.active, state.pending = False, self.next_step
            response.terminated_mask = bytes(terminated)
            response.truncated_mask = bytes(terminated) if both else bytes(len(chosen))
            response.observation.CopyFrom(self.observe(chosen))
            if "lane-warnings" in self.faults:
                response.infos.CopyFrom(lane_warning_infos(len(chosen)))
        return env_pb2.JoinResponse(step=response)

    def not_ready(self) -> BadRequest:
        if "step-before-reset-invalid" in self.faults:
            return BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, "reset the lane before stepping it")
        if "fatal-stays-open" in self.faults:
            return Fatal(env_pb2.ENV_ERROR_CODE_NOT_READY, "reset the lane before stepping it")
        return BadRequest(env_pb2.ENV_ERROR_CODE_NOT_READY, "reset the lane before stepping it")

    def render(self, body: env_pb2.RenderRequest) -> env_pb2.JoinResponse:
        if len(body.env_indices) > 1 and "renders-many-lanes" not in self.faults:
            return error(env_pb2.ENV_ERROR_CODE_UNSUPPORTED, "render one lane at a time")
        if any(i >= len(self.lanes) for i in body.env_indices):
            if "render-bad-lane-unsupported" in self.faults:
                return error(env_pb2.ENV_ERROR_CODE_UNSUPPORTED, "render lane out of range")
            return error(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, "render lane out of range")
        return env_pb2.JoinResponse(render=env_pb2.RenderResponse())

    def observe(self, chosen: list[int]) -> spaces_pb2.SpaceValue:
        slab = np.stack([self.lanes[i].observation() for i in chosen])
        if "f64-obs" in self.faults:
            slab = slab.astype(np.float64)
        if "big-endian-obs" in self.faults:
            slab = slab.astype(">f4")
        return spaces_pb2.SpaceValue(leaves=[slab.tobytes()])


class _RawWire(grpc.GenericRpcHandler):
    """The service spoken in raw bytes, for faults no typed servicer can send."""

    def __init__(self, env: HandmadeEnvService) -> None:
        self.env = env

    def service(self, handler_call_details):
        method = handler_call_details.method.rsplit("/", 1)[-1]
        if method == "Handshake":
            return grpc.unary_unary_rpc_method_handler(self.handshake)
        if method == "Join":
            return grpc.stream_stream_rpc_method_handler(self.join)
        return None

    async def handshake(self, raw: bytes, context) -> bytes:
        if "unparsable-handshake" in self.env.faults:
            return NOT_PROTOBUF
        response = await self.env.Handshake(env_pb2.HandshakeRequest.FromString(raw), context)
        return response.SerializeToString()

    async def join(self, requests, context):
        async for _ in requests:
            yield NOT_PROTOBUF


class _Locks:
    def __init__(self, locks: list[asyncio.Lock]) -> None:
        self.locks = locks

    async def __aenter__(self) -> None:
        for lock in self.locks:
            await lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        for lock in reversed(self.locks):
            lock.release()


async def start(
    lanes: int = 2,
    faults: set[str] | frozenset[str] = frozenset(),
    step_delay: float = 0.0,
    allow_shutdown: bool = False,
) -> tuple[grpc.aio.Server, HandmadeEnvService, str]:
    """Start a server on a free loopback port in the running loop: (server, service, "127.0.0.1:PORT")."""
    service = HandmadeEnvService(lanes, set(faults), step_delay, allow_shutdown)
    server = grpc.aio.server()
    if service.faults & RAW_FAULTS:
        server.add_generic_rpc_handlers((_RawWire(service),))
    else:
        env_pb2_grpc.add_EnvServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()

    async def stop_when_asked() -> None:
        await service.stopped.wait()
        await server.stop(grace=0.2)

    service.stopper = asyncio.get_running_loop().create_task(stop_when_asked())  # type: ignore[attr-defined]
    return server, service, f"127.0.0.1:{port}"
