"""The rllink-client suite's message rules as pure functions: a client's message in, Decisions out.

The phases read the wire (`conversation`) and record what these judges
decide; `EpisodeJudge` keeps what one connection's earlier messages said
(the weights last sent, the episodes still open), so the same judges can
follow a recorded transcript's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from checks.decision import Decision, check, info, missed, passed
from checks.rllink.codec import Dialect
from checks.rllink_client.chunks import Chunk, ChunkProblem
from checks.rllink_client.options import RLlinkClientOptions
from checks.rllink_client.policy import Policy, forward, log_softmax

RTOL = 1e-3
REQUESTS = ("PING", "GET_CONFIG", "GET_STATE", "EPISODES", "EPISODES_AND_GET_STATE")
READABLE = "an episode RLlib can read"


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _numbers(items: list[Any], width: int | None) -> np.ndarray | str:
    """Items as a float64 array ([n] or [n, width]), or what is wrong with them."""
    try:
        array = np.asarray(items, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return f"not numbers of one shape ({exc})"
    want = (len(items),) if width is None else (len(items), width)
    if array.shape != want:
        return f"shape {list(array.shape)}, not {list(want)}"
    if not np.isfinite(array).all():
        return "not all finite"
    return array


@dataclass
class EpisodeJudge:
    """One connection's episodes, judged against what this run served."""

    options: RLlinkClientOptions
    dialect: Dialect
    policy: Policy
    version: int = 0  # weights_seq_no of the last SET_STATE sent on this connection
    steps_since_state: int = 0
    open_chunks: dict[str, tuple[int, np.ndarray]] = field(default_factory=dict)  # id_ -> (t, last obs)
    ended: set[str] = field(default_factory=set)

    def chunk(self, chunk: Chunk, where: str) -> list[Decision]:
        """Values, log-probabilities, the weights used and (msgpack) continuity of one episode chunk."""
        self.steps_since_state += chunk.steps
        spaces, obs = self._spaces(chunk, where)
        if obs is None:
            return [spaces]
        dist = _numbers(chunk.dist, self.options.actions)
        logp = _numbers(chunk.logp, None)
        if isinstance(dist, str) or isinstance(logp, str):
            problem = f"action_dist_inputs {dist}" if isinstance(dist, str) else f"action_logp {logp}"
            shape = f"[{chunk.steps}, {self.options.actions}] dist inputs"
            return [spaces, missed("rllink-client.values.logp", expected=shape, actual=problem)]
        decisions = [spaces, *self._logp(chunk, dist, logp, where), self._onpolicy(obs, dist, where)]
        if self.dialect == "msgpack":
            decisions.append(self._continuity(chunk, obs, where))
        return [decision for decision in decisions if decision is not None]

    def _spaces(self, chunk: Chunk, where: str) -> tuple[Decision, np.ndarray | None]:
        expected = (
            f"obs [{chunk.steps + 1}, {self.options.obs_dim}] finite, integer actions in [0, {self.options.actions}), "
            "finite rewards"
        )
        obs = _numbers(chunk.obs, self.options.obs_dim)
        rewards = _numbers(chunk.rewards, None)
        bad_actions = [a for a in chunk.actions if not _is_int(a) or not 0 <= int(a) < self.options.actions]
        if isinstance(obs, str):
            return missed("rllink-client.values.spaces", expected=expected, actual=f"{where}: observations {obs}"), None
        if bad_actions or isinstance(rewards, str):
            problem = f"actions {bad_actions[:3]!r}" if bad_actions else f"rewards {rewards}"
            return missed("rllink-client.values.spaces", expected=expected, actual=f"{where}: {problem}"), None
        return passed("rllink-client.values.spaces", actual=f"{where}: observations, actions, rewards in range"), obs

    def _logp(self, chunk: Chunk, dist: np.ndarray, logp: np.ndarray, where: str) -> list[Decision]:
        if not chunk.steps:
            return []
        actions = np.asarray([int(a) for a in chunk.actions])
        want = log_softmax(dist)[np.arange(chunk.steps), actions]
        error = np.abs(want - logp)
        worst = int(error.argmax())
        return [
            check(
                bool((logp <= 1e-6).all() and error[worst] <= self.options.tolerance),
                "rllink-client.values.logp",
                expected="action_logp = log softmax(action_dist_inputs)[action] <= 0",
                actual=f"{where}, step {worst}: action_logp {logp[worst]:.6g}, log softmax gives {want[worst]:.6g}",
            )
        ]

    def _onpolicy(self, obs: np.ndarray, dist: np.ndarray, where: str) -> Decision | None:
        if not len(dist):
            return None
        layers = self.policy.versions[self.version]
        mine = forward(layers, obs[:-1])
        error = np.abs(mine - dist) - RTOL * np.abs(mine)
        worst = int(error.max(axis=1).argmax())
        if error[worst].max() <= self.options.tolerance:
            return passed(
                "rllink-client.onpolicy.weights",
                actual=f"{where}: dist inputs match the forward pass of weights_seq_no {self.version}",
            )
        used = [
            seq
            for seq, older in self.policy.versions.items()
            if np.allclose(forward(older, obs[:-1]), dist, rtol=RTOL, atol=self.options.tolerance)
        ]
        hint = f"; they match weights_seq_no {used[0]} instead" if used else "; they match no weights this run sent"
        return missed(
            "rllink-client.onpolicy.weights",
            expected=f"dist inputs of weights_seq_no {self.version}, the last SET_STATE sent",
            actual=f"{where}, step {worst}: {np.round(dist[worst], 5).tolist()} vs "
            f"{np.round(mine[worst], 5).tolist()}{hint}",
        )

    def _continuity(self, chunk: Chunk, obs: np.ndarray, where: str) -> Decision:
        expected = "a cut episode continues with its id_, t_started = the previous t and its last observation"
        key = str(chunk.id_)
        clause = "rllink-client.chunk.continuity"
        if key in self.ended:
            return missed(clause, expected=expected, actual=f"{where}: id_ {key} continues an ended episode")
        previous = self.open_chunks.pop(key, None)
        if previous is None:
            resumed = [k for k, (_, last) in self.open_chunks.items() if np.array_equal(last, obs[0])]
            if resumed or chunk.t_started not in (0, None):
                return missed(
                    clause,
                    expected=expected,
                    actual=f"{where}: new id_ {key} with t_started {chunk.t_started!r}"
                    + (f", continuing episode {resumed[0]}" if resumed else ""),
                )
        else:
            t_before, last = previous
            if chunk.t_started != t_before or not np.array_equal(last, obs[0]):
                return missed(
                    clause,
                    expected=expected,
                    actual=f"{where}: id_ {key} t_started {chunk.t_started!r} after t {t_before}, first observation "
                    f"{'the same' if np.array_equal(last, obs[0]) else 'different'}",
                )
        if chunk.terminated or chunk.truncated:
            self.ended.add(key)
        elif _is_int(chunk.t):
            self.open_chunks[key] = (int(chunk.t), obs[-1])
        return passed(clause, actual=f"{where}: chunks continue their episodes")


def request_type(kind: str) -> Decision:
    """rllink-client.frame.type: a client sends request types only."""
    if kind not in REQUESTS:
        return missed("rllink-client.frame.type", expected=f"one of {', '.join(REQUESTS)}", actual=f"type {kind!r}")
    return passed("rllink-client.frame.type", actual="request types only")


def ping_first(kind: str) -> Decision:
    return check(kind == "PING", "rllink-client.handshake.ping-first", expected="PING first", actual=f"{kind} first")


def config_state_first(kind: str, config_sent: bool, state_sent: bool) -> Decision:
    """Episodes may come only after the client has both SET_CONFIG and SET_STATE."""
    return check(
        config_sent and state_sent,
        "rllink-client.handshake.config-state-first",
        expected="SET_CONFIG and SET_STATE sent before any episodes",
        actual=f"{kind} after {'SET_CONFIG' if config_sent else 'no SET_CONFIG'} and "
        f"{'SET_STATE' if state_sent else 'no SET_STATE'}",
    )


def no_episodes_list(kind: str, episodes: Any) -> Decision:
    """An EPISODES without an `episodes` list misses rllink-client.episode.fields (RLlib's listener dies on it)."""
    return missed(
        "rllink-client.episode.fields",
        expected="an `episodes` list",
        actual=f"{kind} with episodes {type(episodes).__name__}",
    )


def unreadable(problem: ChunkProblem, where: str) -> Decision:
    """The miss (episode fields or shape) that makes RLlib's listener thread die on an episode."""
    return missed(problem.clause_id, expected=READABLE, actual=f"{where}: {problem.reason}")


def episodes_read(kind: str, count: int) -> list[Decision]:
    return [
        passed("rllink-client.episode.fields", actual=f"{count} episodes in {kind} with every key"),
        passed("rllink-client.episode.shape", actual=f"{count} episodes in {kind} with matching lengths"),
    ]


def batch(message: dict[str, Any], steps: int, want: int, number: int) -> list[Decision]:
    """An EPISODES_AND_GET_STATE after `steps` env steps: the advertised fragment length, and `timesteps` saying so."""
    timesteps = message.get("timesteps")
    return [
        check(
            steps == want,
            "rllink-client.batch.size",
            expected=f"{want} env steps since the last SET_STATE (the advertised fragment length)",
            actual=f"{steps} env steps at EPISODES_AND_GET_STATE #{number}",
        ),
        check(
            timesteps == steps and "timesteps" in message,
            "rllink-client.batch.timesteps",
            expected=f"timesteps = {steps}",
            actual=f"timesteps {timesteps!r}" if "timesteps" in message else f"no timesteps (keys {sorted(message)})",
        ),
    ]


# ---------------------------------------------------------------- frames and the conversation's turns

HEADER = "rllink-client.frame.header"
FramePart = Literal["header", "body", "type", "dialect"]


def dialect_settled(settled: str | None) -> list[Decision]:
    """The dialect the run serves, once the first body fixed it (`settled` names it and why; None: known already)."""
    return [] if settled is None else [info("rllink-client.dialect", actual=settled)]


def frame_read(kind: str, settled: str | None) -> list[Decision]:
    """A frame RLlib reads: an 8-digit header and one map of the run's dialect, of request type `kind`."""
    header = passed(HEADER, actual="8-digit byte-length headers, one map per body")
    return [*dialect_settled(settled), header, request_type(kind)]


def frame_unread(part: FramePart, seen: str, *, length: int, dialect: str, settled: str | None) -> list[Decision]:
    """A frame RLlib could not read: its `part` at fault (a header of `length`, a body of `dialect`), and why."""
    if part == "type":
        miss = missed("rllink-client.frame.type", expected="a map with a str `type`", actual=seen)
    elif part == "header":
        miss = missed(HEADER, expected="8 ASCII digits, the body's byte length", actual=seen)
    elif part == "body":
        miss = missed(
            HEADER, expected=f"the header's {length} bytes holding one {dialect} map, nothing more", actual=seen
        )
    else:
        miss = missed(HEADER, expected=f"a {dialect} body, the dialect this run serves", actual=seen)
    return [*dialect_settled(settled), miss]


def waited(pipelined: bool, request: str, delay: float) -> Decision:
    """Whether the client sent more during the `delay` seconds before the reply to `request`."""
    if pipelined:
        return missed(
            "rllink-client.req-resp.waits",
            expected=f"nothing until the reply to {request}",
            actual=f"more bytes within {delay:g}s of {request}, before its reply",
        )
    return passed("rllink-client.req-resp.waits", actual="waited for each reply")


def spoke_first(peer: str, first: str | None, timeout: float, closed: str | None = None) -> Decision:
    """A connection's first frame: its type `first`, or None when the client stayed silent or closed (`closed`)."""
    if first is not None:
        return passed("rllink-client.connect.speaks", actual=f"connected from {peer}, sent {first}")
    return missed(
        "rllink-client.connect.speaks",
        expected="a first frame from the client (the server speaks only when asked)",
        actual=f"nothing within {timeout:g}s" if closed is None else f"the client closed ({closed}) without a frame",
    )


def after_episodes(kind: str | None, timeout: float) -> Decision:
    """What the client sent after a bare EPISODES (None: nothing for `timeout` seconds)."""
    if kind is not None:
        return passed("rllink-client.req-resp.episodes-no-reply", actual=f"{kind} after EPISODES")
    return missed(
        "rllink-client.req-resp.episodes-no-reply",
        expected="the client goes on after EPISODES (no reply comes)",
        actual=f"silent for {timeout:g}s after EPISODES: waiting for a reply?",
    )


def session_ended(bare_episodes_seen: bool, dialect: Dialect) -> list[Decision]:
    """The clauses a session's traffic could not judge: no bare EPISODES came, or json chunks."""
    decisions = []
    if not bare_episodes_seen:
        decisions.append(
            info(
                "rllink-client.req-resp.episodes-no-reply",
                actual="not judged, because the client sent every episode with EPISODES_AND_GET_STATE",
            )
        )
    if dialect == "json":
        decisions.append(
            info(
                "rllink-client.chunk.continuity",
                actual="not judged, because json-dialect chunks carry no episode id or step counter",
            )
        )
    return decisions


def reconnect(peer: str | None, window: float, recycle: float) -> list[Decision]:
    """After the listener closed for `recycle` s: the peer that connected again (None: none within `window` s)."""
    if peer is None:
        why = f"the client did not connect within {window:g}s of listening again"
        return [
            info("rllink-client.connect.retries", actual=f"not judged, because {why}"),
            info("rllink-client.disconnect.handles-close", actual=f"{why}: it exited (or gave up)"),
        ]
    return [
        passed(
            "rllink-client.connect.retries",
            actual=f"connected again from {peer} after the listener was closed for {recycle:g}s",
        )
    ]


def served_again() -> Decision:
    return info(
        "rllink-client.disconnect.handles-close",
        actual="reconnected; its handshake and first batch on the new connection are judged like the first",
    )
