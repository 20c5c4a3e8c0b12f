"""A recorded grpc.aio client for an rlmesh env endpoint.

Every unary call and every Join message goes into a transcript as a "grpc"
frame with a bounded summary; gRPC status codes and details are recorded when
a call fails or a stream ends. Every call has a deadline and every read is
bounded, and received messages are capped by `max_receive_message_length`, so
a hostile server can neither hang nor exhaust the checker. grpc hands over
None for a message that does not parse; that is turned into a failed call too.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any

import grpc
from google.protobuf import unknown_fields
from google.protobuf.message import Message

from checks.core import Transcript, truncate
from checks.errors import Closer, NoReply, PeerClosed, TargetUnreachable
from checks.pinning import address_for, authority
from checks.rlmesh.deadline import Deadlines
from checks.rlmesh.proto import core_pb2, env_pb2, env_pb2_grpc

GENERATION = "rlmesh-wire-v1"
EDITION = "2026.06"
JOIN_SLOT_WAIT = 3.0  # seconds to wait for the previous session's slot to free up
HEADER_WAIT = 0.25  # seconds to wait for a new stream's response headers before writing
UNKNOWN_FIELD_SAMPLE = 16  # responses per session scanned for undeclared fields (information only)
STATUS_WAIT = 0.05  # and then for a status that would mean the stream was refused
UNPARSABLE = "the target sent bytes that do not parse as the expected message"
ERROR_CODES = {value: name.removeprefix("ENV_ERROR_CODE_") for name, value in env_pb2.EnvErrorCode.items()}


class GrpcClosed(PeerClosed):
    """A gRPC call that ended with a status: `status` is grpc's code (`code` its number), `reason` its details."""

    def __init__(self, status: grpc.StatusCode, details: str, *, by: Closer = "peer") -> None:
        super().__init__(by=by, code=status.value[0], reason=details or "")
        self.status = status

    def __str__(self) -> str:
        return f"gRPC {self.status.name}: {truncate(self.reason, 160)}"


class RpcFailed(GrpcClosed):
    """A unary call (Handshake, Shutdown) ended with a gRPC status other than OK."""


class JoinEnded(GrpcClosed):
    """The Join stream ended (status OK is a clean end, anything else a failure)."""

    def __str__(self) -> str:
        return f"the Join stream ended with {super().__str__()}"


class OverLimit(JoinEnded):
    """The target sent a message larger than the checker's `max_message_bytes`: a limit of ours, not a verdict."""


class StrayResponse(NoReply):
    """A response arrived whose id matches no outstanding request, so the one awaited may never come."""


def error_text(error: env_pb2.EnvError) -> str:
    kind = "recoverable" if error.is_recoverable else "non-recoverable"
    return f"{ERROR_CODES.get(error.code, error.code)} ({kind}) {truncate(error.message, 160)!r}"


LAZY_SUMMARY_BYTES = 16 * 1024


def summarize_request(request: env_pb2.JoinRequest) -> str:
    kind = request.WhichOneof("kind") or "(no arm set)"
    head = f"{kind} id={truncate(request.request_id, 40)!r}"
    match kind:
        case "reset":
            reset = request.reset
            return (
                f"{head} seeds={list(reset.seeds)[:8]} env_indices={list(reset.env_indices)[:8]} "
                f"episode_ids={len(reset.episode_ids)}"
            )
        case "step":
            step = request.step
            sizes = [len(leaf) for leaf in step.action.leaves[:6]] if step.HasField("action") else "absent"
            indices = list(step.env_indices)[:8]
            return f"{head} action leaves={sizes} env_indices={indices} episode_ids={len(step.episode_ids)}"
        case "render":
            return f"{head} env_indices={list(request.render.env_indices)[:8]}"
        case "close":
            return f"{head} reason={truncate(request.close.reason, 60)!r}"
        case "configure":
            return f"{head} selected_workflow_edition={truncate(request.configure.selected_workflow_edition, 40)!r}"
        case _:
            return head


def summarize_response(response: env_pb2.JoinResponse) -> str:
    kind = response.WhichOneof("kind") or "(no arm set)"
    head = f"{kind} id={truncate(response.request_id, 40)!r}"
    if kind == "reset":
        sizes = [len(leaf) for leaf in response.reset.observation.leaves[:6]]
        return f"{head} obs leaves={sizes} infos={sorted(response.reset.infos.entries)[:6]}"
    if kind == "step":
        body = response.step
        sizes = [len(leaf) for leaf in body.observation.leaves[:6]]
        done = [summarize_episode(e) for e in body.completed_episodes[:4]]
        return (
            f"{head} obs leaves={sizes} rewards={[round(r, 4) for r in body.rewards[:8]]} "
            f"terminated={list(body.terminated_mask[:8])} truncated={list(body.truncated_mask[:8])} "
            f"env_indices={list(body.env_indices)[:8]} completed={done}"
        )
    if kind == "render":
        render = response.render
        frame = f"{len(render.frame)} bytes" if render.HasField("frame") else "none"
        return f"{head} frame={frame} format={render.format}"
    if kind == "close":
        return f"{head} final_episodes={[summarize_episode(e) for e in response.close.final_episodes[:4]]}"
    if kind == "error":
        return f"{head} {error_text(response.error)}"
    return head


def summarize_episode(episode: env_pb2.EpisodeMetadata) -> str:
    seed = episode.seed if episode.HasField("seed") else None
    flags = ("T" if episode.terminated else "") + ("t" if episode.truncated else "")
    return (
        f"lane {episode.env_index} id={truncate(episode.episode_id, 24)!r} seed={seed} "
        f"steps={episode.step_count} return={episode.cumulative_reward:.4g} {flags or '-'}"
    )


def unknown_tags(message: Message) -> list[int]:
    try:
        fields = unknown_fields.UnknownFieldSet(message)
        return sorted({fields[i].field_number for i in range(len(fields))})
    except Exception:  # an unparsable unknown field is still just unknown
        return []


class Endpoint:
    """One channel to the target. Use as `async with Endpoint(...) as endpoint`."""

    def __init__(self, url: str, timeout: float, max_message_bytes: int) -> None:
        self.url = url
        self.timeout = timeout
        host, _, port = url.rpartition(":")
        address = address_for(host)
        pinned = [] if address == host else [("grpc.default_authority", url)]  # :authority keeps the name
        self.channel = grpc.aio.insecure_channel(
            url if address == host else authority(address, int(port)),
            options=[
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", max_message_bytes),
                ("grpc.enable_retries", 0),
                *pinned,
            ],
        )
        self.stub = env_pb2_grpc.EnvServiceStub(self.channel)  # type: ignore[no-untyped-call]  # generated, unannotated

    async def __aenter__(self) -> Endpoint:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close(grace=None)

    async def handshake(
        self,
        transcript: Transcript,
        generation: str | None = GENERATION,
        unavailable_is_unreachable: bool = True,
    ) -> env_pb2.HandshakeResponse:
        """Handshake with `generation` (None: send no `base` at all). Raises RpcFailed."""
        request = env_pb2.HandshakeRequest()
        if generation is not None:
            request.base.CopyFrom(
                core_pb2.HandshakeRequest(
                    protocol_generation=generation,
                    peer_info=core_pb2.PeerInfo(component="rlconform", language="python"),
                    supported_workflow_editions=[EDITION],
                )
            )
        shown = "no base" if generation is None else f"protocol_generation={generation!r}"
        response: env_pb2.HandshakeResponse = await self._unary(
            self.stub.Handshake, request, transcript, f"Handshake {shown}", unavailable_is_unreachable
        )
        base = response.base
        contract = "with env_contract" if response.HasField("env_contract") else "no env_contract"
        transcript.received(
            "grpc",
            response.ByteSize(),
            (
                f"Handshake compatible={base.compatible} {contract} capabilities={dict(base.capabilities)} "
                f"component={truncate(base.peer_info.component, 40)!r} "
                f"error_message={truncate(base.error_message, 120)!r}"
            ),
        )
        return response

    async def shutdown(self, transcript: Transcript, reason: str) -> env_pb2.ShutdownResponse:
        request = env_pb2.ShutdownRequest(base=core_pb2.ShutdownRequest(reason=reason))
        response: env_pb2.ShutdownResponse = await self._unary(
            self.stub.Shutdown, request, transcript, f"Shutdown reason={reason!r}", False
        )
        transcript.received(
            "grpc",
            response.ByteSize(),
            (f"Shutdown accepted={response.base.accepted} message={truncate(response.base.message, 120)!r}"),
        )
        return response

    async def health(self, transcript: Transcript) -> str:
        """grpc.health.v1 Check for service "": the status name, or the gRPC code that refused it."""
        check = self.channel.unary_unary(
            "/grpc.health.v1.Health/Check", request_serializer=bytes, response_deserializer=bytes
        )
        transcript.sent("grpc", 0, "grpc.health.v1.Health/Check service=''")
        try:
            raw = await check(b"", timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            transcript.closed(exc.code().value[0], f"{exc.code().name}: {exc.details()}", "target")
            return exc.code().name
        status = raw[1] if len(raw) >= 2 and raw[0] == 0x08 else 0
        name = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}.get(status, str(status))
        transcript.received("grpc", len(raw), f"health status {name}")
        return name

    async def _unary(
        self, method: Any, request: Message, transcript: Transcript, summary: str, unreachable: bool
    ) -> Any:
        """`method(request)` under the deadline; its response, typed by the caller (the generated stub is untyped)."""
        transcript.sent("grpc", request.ByteSize(), summary)
        try:
            response = await method(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
            transcript.closed(code.value[0], f"{code.name}: {truncate(details, 160)}", "target")
            if unreachable and code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise TargetUnreachable(f"{self.url}: gRPC {code.name}: {truncate(details, 120)}") from None
            raise RpcFailed(code, details) from None
        if response is None:
            raise RpcFailed(grpc.StatusCode.INTERNAL, UNPARSABLE)
        return response

    async def join(
        self, transcript: Transcript, first: env_pb2.JoinRequest, slot_wait: float | None = None
    ) -> tuple[JoinSession, env_pb2.JoinResponse]:
        """Open a Join session and exchange its first request.

        A FAILED_PRECONDITION right away means the previous session's slot is
        not free yet, so it is retried for `slot_wait` seconds (JOIN_SLOT_WAIT by default) before giving up.
        """
        deadline = time.monotonic() + (JOIN_SLOT_WAIT if slot_wait is None else slot_wait)
        while True:
            session = JoinSession(self.stub.Join(timeout=self.timeout * 8 + 30), transcript, self.timeout)
            try:
                return session, await session.request(first)
            except NoReply:
                session.cancel()  # free the endpoint's one session slot for whatever comes next
                raise
            except JoinEnded as ended:
                if ended.status is not grpc.StatusCode.FAILED_PRECONDITION or time.monotonic() > deadline:
                    raise
                transcript.note("the session slot is still taken; retrying")
                await asyncio.sleep(0.15)


class JoinSession:
    """One Join stream: requests get ids, responses are matched back by id."""

    def __init__(
        self,
        call: grpc.aio.StreamStreamCall[env_pb2.JoinRequest, env_pb2.JoinResponse],
        transcript: Transcript,
        timeout: float,
    ) -> None:
        self.call = call
        self.transcript = transcript
        self.timeout = timeout
        self.counter = 0
        self.sent_at: dict[str, float] = {}
        self.arrived: dict[str, env_pb2.JoinResponse] = {}
        self.answered: set[str] = set()
        self.stray: list[str] = []  # responses whose id was never sent or was answered already
        self.unknown: set[int] = set()
        self.timings: list[tuple[str, float]] = []  # (request kind, round-trip seconds)
        self.kinds: dict[str, str] = {}
        self.ended: JoinEnded | None = None
        self.deadlines = Deadlines()

    async def send(self, request: env_pb2.JoinRequest) -> str:
        if not request.request_id:
            self.counter += 1
            request.request_id = f"rc-{self.counter}"
        if self.ended is not None:
            raise self.ended
        if not self.sent_at:
            await self._settle()
        size = request.ByteSize()
        # Like a response's, a small request's summary is made when first read (this session never changes a
        # request it sent).
        summary = partial(summarize_request, request) if size <= LAZY_SUMMARY_BYTES else summarize_request(request)
        self.transcript.sent("grpc", size, summary)
        self.sent_at[request.request_id] = time.monotonic()
        self.kinds[request.request_id] = request.WhichOneof("kind") or ""
        try:
            with self.deadlines.within(self.timeout):  # one timer for the session's awaits (see deadline.py)
                await self.call.write(request)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
            # A write into a finished call fails with a local error; the call's own status says why.
            raise await self._read_status() from None
        except TimeoutError:
            self.transcript.note(f"writing did not finish within {self.timeout:g}s")
            raise NoReply(f"writing did not finish within {self.timeout:g}s") from None
        return request.request_id

    async def _settle(self) -> None:
        """Give the server a moment to accept or refuse the stream before the first write.

        Writing into a stream the server has already refused makes grpc.aio
        replace the server's status (e.g. FAILED_PRECONDITION) with a local
        INTERNAL, so the refusal is read first when it comes at once.
        """
        try:
            await asyncio.wait_for(asyncio.shield(self.call.initial_metadata()), HEADER_WAIT)
            # A refusal's headers and status arrive together but are handled apart: give the status a moment.
            await asyncio.wait_for(asyncio.shield(self.call.code()), STATUS_WAIT)
        except (TimeoutError, grpc.aio.AioRpcError):
            pass
        if self.call.done():
            raise await self._read_status()

    async def request(self, request: env_pb2.JoinRequest, timeout: float | None = None) -> env_pb2.JoinResponse:
        return await self.response(await self.send(request), timeout)

    async def response(self, request_id: str, timeout: float | None = None) -> env_pb2.JoinResponse:
        """The response carrying `request_id`; others that arrive meanwhile are kept."""
        loop = asyncio.get_running_loop()
        end = loop.time() + (self.timeout if timeout is None else timeout)
        while request_id not in self.arrived:
            strays = len(self.stray)
            await self._read_one(end - loop.time())
            if len(self.stray) > strays and len(self.sent_at) - len(self.answered) <= 1:
                raise StrayResponse(
                    f"a response with id {truncate(self.stray[-1], 40)!r} came instead of one for {request_id!r}"
                )
        return self.arrived.pop(request_id)

    async def _read_one(self, left: float) -> None:
        if self.ended is not None:
            raise self.ended
        if left <= 0:
            raise NoReply(f"no response within {self.timeout:g}s")
        try:
            with self.deadlines.within(left):
                message = await self.call.read()
        except grpc.aio.AioRpcError as exc:
            raise self._end(exc.code(), exc.details()) from None
        except TimeoutError:
            self.transcript.note(f"no response within {left:.3g}s")
            raise NoReply(f"no response within {self.timeout:g}s") from None
        if message is grpc.aio.EOF:
            raise await self._read_status()
        if not isinstance(message, env_pb2.JoinResponse):  # grpc hands over None for bytes that do not parse
            self.transcript.note(UNPARSABLE)
            self.call.cancel()
            raise self._end(grpc.StatusCode.INTERNAL, f"{UNPARSABLE} (the checker cancelled the stream)", "checker")
        size = message.ByteSize()
        # Summarized when first read, off the step path; a large response is summarized now, so the
        # transcript does not hold it alive.
        summary = partial(summarize_response, message) if size <= LAZY_SUMMARY_BYTES else summarize_response(message)
        self.transcript.received("grpc", size, summary)
        if len(self.answered) < UNKNOWN_FIELD_SAMPLE:
            self.unknown.update(unknown_tags(message))
        request_id = message.request_id
        if request_id not in self.sent_at or request_id in self.answered:
            self.stray.append(request_id)
            self.transcript.note(f"response id {truncate(request_id, 40)!r} matches no outstanding request")
            return
        self.answered.add(request_id)
        self.timings.append((self.kinds[request_id], time.monotonic() - self.sent_at[request_id]))
        self.arrived[request_id] = message

    async def _read_status(self) -> JoinEnded:
        try:
            code = await asyncio.wait_for(self.call.code(), timeout=self.timeout)
            details = await self.call.details()
        except TimeoutError:
            code, details = grpc.StatusCode.UNKNOWN, "no status after the end of the stream"
        return self._end(code, details)

    def _end(self, code: grpc.StatusCode, details: str | None, by: Closer = "peer") -> JoinEnded:
        if self.ended is None:
            # gRPC refuses an oversized message locally, before allocating it, and ends the call this way.
            local_limit = code is grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in (details or "")
            if local_limit:
                self.ended = OverLimit(code, details or "", by="checker")
            else:
                self.ended = JoinEnded(code, details or "", by=by)
            self.transcript.closed(code.value[0], f"{code.name}: {truncate(details or '', 160)}", "target")
        return self.ended

    async def wait_end(self, timeout: float | None = None) -> JoinEnded:
        """Read until the stream ends; raises NoReply if it is still open at the deadline."""
        loop = asyncio.get_running_loop()
        end = loop.time() + (self.timeout if timeout is None else timeout)
        for _ in range(64):  # a flood of messages is an answer, not an end
            try:
                await self._read_one(end - loop.time())
            except JoinEnded as ended:
                return ended
        raise NoReply("the stream kept sending instead of ending")

    def unanswered(self) -> list[str]:
        return [rid for rid in self.sent_at if rid not in self.answered]

    def cancel(self) -> None:
        if self.ended is None:
            self.transcript.closed(None, "cancelled by the checker", "checker")
            self.ended = JoinEnded(grpc.StatusCode.CANCELLED, "cancelled by the checker", by="checker")
        self.deadlines.stop()
        self.call.cancel()

    async def close(self, reason: str = "rlconform done") -> None:
        """End the session politely (Close, then the stream's end); never raises."""
        if self.ended is None:
            try:
                await self.request(env_pb2.JoinRequest(close=env_pb2.CloseEnvsRequest(reason=reason)))
                await self.wait_end(min(self.timeout, 3.0))
            except (JoinEnded, NoReply):
                pass
        self.cancel()
