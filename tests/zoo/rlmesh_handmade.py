"""A small hand-written rlmesh env server on rlconform's own protos, for faults `rlmesh` cannot produce.

With no faults it is a conforming lane server: N lanes of a seeded walk
(Box(2,) float32 observation [position, count], Discrete(3) action, episodes of
`EPISODE_LENGTH` steps, DISABLED autoreset, `subset_step`), one lock per lane so
lanes overlap, and recoverable errors where the protocol asks for them. Each
fault in FAULTS breaks exactly one thing and names the clause that must catch it.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import numpy as np

from checks.rlmesh.proto import core_pb2, env_pb2, env_pb2_grpc, spaces_pb2

GENERATION = "rlmesh-wire-v1"
EPISODE_LENGTH = 5
ACTIONS = 3
LOW, HIGH = -100.0, 100.0

FAULTS = {
    "any-generation": "rlmesh.h2.generation-gate",  # compatible=true whatever generation is offered
    "fatal-bad-action": "rlmesh.v3.bad-action-rejected",  # a bad action is a non-recoverable INTERNAL
    "serial-lanes": "rlmesh.l2.lanes-overlap",  # one lock for all lanes despite subset_step
    "never-stops": "rlmesh.c2.shutdown",  # accepts Shutdown and keeps serving
    "double-sessions": "rlmesh.e4.single-session",  # serves a second concurrent Join
    "wide-subset": "rlmesh.h4.capability-honest",  # advertises subset_step, steps every lane
    "unspecified-autoreset": "rlmesh.h1.autoreset-mode",  # autoreset_mode UNSPECIFIED
    "f64-obs": "rlmesh.v2.obs-layout",  # float64 bytes for a float32 observation space
    "off-by-one-steps": "rlmesh.s2.episode-accounting",  # completions count one step too many
    "forgets-on-close": "rlmesh.c1.close",  # Close reports no still-active episode
    "wrong-echo": "rlmesh.e5.request-id-echo",  # error responses carry no request_id
}


def error(code: int, message: str, recoverable: bool = True) -> env_pb2.JoinResponse:
    return env_pb2.JoinResponse(error=env_pb2.EnvError(code=code, message=message, is_recoverable=recoverable))


class BadRequest(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class BadAction(BadRequest):
    def __init__(self, message: str) -> None:
        super().__init__(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, message)


class Lane:
    def __init__(self) -> None:
        self.rng = np.random.default_rng()
        self.position = 0.0
        self.count = 0
        self.episode_id = ""
        self.seed: int | None = None
        self.total = 0.0
        self.started = 0
        self.active = False

    def reset(self, seed: int | None, episode_id: str) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.position = float(np.float32(self.rng.uniform(-5, 5)))
        self.count, self.total, self.seed, self.episode_id = 0, 0.0, seed, episode_id
        self.started, self.active = time.time_ns(), True

    def step(self, action: int) -> tuple[float, bool]:
        if not self.active:  # ended under DISABLED: it stays ended
            return 0.0, True
        self.position = float(np.clip(self.position + action - 1, LOW, HIGH))
        self.count += 1
        self.total += 1.0
        return 1.0, self.count >= EPISODE_LENGTH

    def observation(self) -> np.ndarray:
        return np.array([self.position, self.count], dtype=np.float32)

    def metadata(self, index: int, truncated: bool, extra_steps: int = 0) -> env_pb2.EpisodeMetadata:
        episode = env_pb2.EpisodeMetadata(
            episode_id=self.episode_id, env_index=index, step_count=self.count + extra_steps,
            cumulative_reward=self.total, terminated=not truncated, truncated=truncated,
            start_timestamp_ns=self.started, end_timestamp_ns=time.time_ns())
        if self.seed is not None:
            episode.seed = self.seed
        return episode


class HandmadeEnvService(env_pb2_grpc.EnvServiceServicer):
    def __init__(self, lanes: int, faults: set[str], step_delay: float, allow_shutdown: bool) -> None:
        unknown = faults - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {unknown}")
        self.faults = faults
        self.lanes = [Lane() for _ in range(lanes)]
        self.locks = [asyncio.Lock() for _ in range(lanes)]
        self.global_lock = asyncio.Lock()
        self.step_delay = step_delay
        self.allow_shutdown = allow_shutdown
        self.sessions = 0
        self.stopped = asyncio.Event()

    # -- unary calls

    def contract(self) -> core_pb2.EnvContract:
        box = spaces_pb2.SpaceSpec(shape=[2], dtype=spaces_pb2.DATA_TYPE_FLOAT32, box=spaces_pb2.BoxSpec(
            uniform=spaces_pb2.UniformBounds(low=np.float32(LOW).tobytes(), high=np.float32(HIGH).tobytes())))
        discrete = spaces_pb2.SpaceSpec(dtype=spaces_pb2.DATA_TYPE_INT64, discrete=spaces_pb2.DiscreteSpec(n=ACTIONS))
        mode = core_pb2.AUTORESET_MODE_UNSPECIFIED if "unspecified-autoreset" in self.faults \
            else core_pb2.AUTORESET_MODE_DISABLED
        return core_pb2.EnvContract(spec=core_pb2.EnvSpec(id="HandmadeWalk-v0", action_space=discrete,
                                                          observation_space=box),
                                    num_envs=len(self.lanes), autoreset_mode=mode)

    async def Handshake(self, request, context):
        if not request.HasField("base"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "handshake request missing base")
        generation = request.base.protocol_generation.strip()
        base = core_pb2.HandshakeResponse(peer_info=core_pb2.PeerInfo(component="handmade-env"),
                                          capabilities={"subset_step": "true"}, supported_workflow_editions=["2026.06"])
        if generation != GENERATION and "any-generation" not in self.faults:
            base.compatible = False
            base.error_message = f"protocol generation {generation} not compatible with {GENERATION}"
            return env_pb2.HandshakeResponse(base=base)
        base.compatible = True
        return env_pb2.HandshakeResponse(base=base, env_contract=self.contract())

    async def Shutdown(self, request, context):
        if not self.allow_shutdown and "never-stops" not in self.faults:
            return env_pb2.ShutdownResponse(base=core_pb2.ShutdownResponse(accepted=False, message="shutdown disabled"))
        if "never-stops" not in self.faults:
            self.stopped.set()
        return env_pb2.ShutdownResponse(base=core_pb2.ShutdownResponse(accepted=True, message="shutting down"))

    # -- the Join stream

    async def Join(self, request_iterator, context):
        if self.sessions and "double-sessions" not in self.faults:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "an active Join session exists")
        self.sessions += 1
        await context.send_initial_metadata(())
        session_reset = [False] * len(self.lanes)
        out: asyncio.Queue = asyncio.Queue()
        tasks: set[asyncio.Task] = set()

        async def handle(request: env_pb2.JoinRequest) -> None:
            response = await self.answer(request, session_reset)
            if "wrong-echo" not in self.faults or response.WhichOneof("kind") != "error":
                response.request_id = request.request_id
            await out.put(response)

        async def pump() -> None:
            async for request in request_iterator:
                task = asyncio.create_task(handle(request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                await asyncio.sleep(0)  # let it take its lane lock before the next one arrives
            await asyncio.gather(*tasks)
            await out.put(None)

        reader = asyncio.create_task(pump())
        try:
            while True:
                response = await out.get()
                if response is None:
                    return
                yield response
                if response.WhichOneof("kind") == "close" or (
                        response.WhichOneof("kind") == "error" and not response.error.is_recoverable):
                    return
        finally:
            reader.cancel()
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
                finals = [] if "forgets-on-close" in self.faults else [
                    lane.metadata(i, truncated=True) for i, lane in enumerate(self.lanes) if lane.active]
                for lane in self.lanes:
                    lane.active = False
                return env_pb2.JoinResponse(close=env_pb2.CloseEnvsResponse(final_episodes=finals))
            if kind == "configure":
                return env_pb2.JoinResponse(configure=env_pb2.ConfigureEnvResponse())
            return error(env_pb2.ENV_ERROR_CODE_UNSUPPORTED, "empty or unknown Join request")
        except BadAction as exc:
            if "fatal-bad-action" in self.faults:
                return error(env_pb2.ENV_ERROR_CODE_INTERNAL, str(exc), recoverable=False)
            return error(exc.code, str(exc))
        except BadRequest as exc:
            return error(exc.code, str(exc))

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
        chosen = self.indices(body.env_indices, "partial reset")
        seeds = list(body.seeds)
        if len(seeds) == 1 and len(chosen) > 1 and not body.env_indices:
            seeds = [seeds[0] + i for i in range(len(chosen))]  # one seed seeds every lane, as gymnasium does
        if seeds and len(seeds) != len(chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_INVALID_ACTION, f"{len(seeds)} seeds for {len(chosen)} lanes")
        async with self.locked(chosen):
            for position, lane in enumerate(chosen):
                ids = list(body.episode_ids)
                self.lanes[lane].reset(seeds[position] if seeds else None, ids[position] if position < len(ids) else "")
                session_reset[lane] = True
        return env_pb2.JoinResponse(reset=env_pb2.ResetResponse(observation=self.observe(chosen)))

    async def step(self, body: env_pb2.StepRequest, session_reset: list[bool]) -> env_pb2.JoinResponse:
        chosen = self.indices(body.env_indices, "subset step")
        leaves = list(body.action.leaves) if body.HasField("action") else []
        if len(leaves) != 1 or len(leaves[0]) != 8 * len(chosen):
            raise BadAction("action layout does not fit the action space")
        actions = np.frombuffer(leaves[0], dtype="<i8")
        if ((actions < 0) | (actions >= ACTIONS)).any():
            raise BadAction("action outside Discrete(3)")
        if "wide-subset" in self.faults:
            chosen, actions = list(range(len(self.lanes))), np.resize(actions, len(self.lanes))
        if not all(session_reset[i] for i in chosen):
            raise BadRequest(env_pb2.ENV_ERROR_CODE_NOT_READY, "reset the lane before stepping it")
        response = env_pb2.StepResponse(env_indices=list(body.env_indices) if body.env_indices else [])
        async with self.locked(chosen):
            if self.step_delay:
                await asyncio.sleep(self.step_delay)
            terminated = bytearray()
            for lane, action in zip(chosen, actions):
                was_active = self.lanes[lane].active
                reward, done = self.lanes[lane].step(int(action))
                response.rewards.append(reward)
                terminated.append(1 if done else 0)
                if done and was_active:
                    extra = 1 if "off-by-one-steps" in self.faults else 0
                    response.completed_episodes.append(self.lanes[lane].metadata(lane, False, extra))
                    self.lanes[lane].active = False
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
        if "f64-obs" in self.faults:
            slab = slab.astype(np.float64)
        return spaces_pb2.SpaceValue(leaves=[slab.tobytes()])


class _Locks:
    def __init__(self, locks: list[asyncio.Lock]) -> None:
        self.locks = locks

    async def __aenter__(self) -> None:
        for lock in self.locks:
            await lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        for lock in reversed(self.locks):
            lock.release()


async def start(lanes: int = 2, faults: set[str] | frozenset[str] = frozenset(), step_delay: float = 0.0,
                allow_shutdown: bool = False) -> tuple[grpc.aio.Server, HandmadeEnvService, str]:
    """Start a server on a free loopback port in the running loop: (server, service, "127.0.0.1:PORT")."""
    service = HandmadeEnvService(lanes, set(faults), step_delay, allow_shutdown)
    server = grpc.aio.server()
    env_pb2_grpc.add_EnvServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()

    async def stop_when_asked() -> None:
        await service.stopped.wait()
        await server.stop(grace=0.2)

    service.stopper = asyncio.get_running_loop().create_task(stop_when_asked())  # type: ignore[attr-defined]
    return server, service, f"127.0.0.1:{port}"
