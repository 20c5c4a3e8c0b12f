"""Zoo faults in reuse-feedback-obs (SPEC 10.1): what a server honours, refuses and checks.

Each class is the conforming `ZooServer` with one hook overridden; `ZOO` in
`catalogue.py` says which clause the suite must flag for each.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.zoo.plugrl_server.core import ZooServer
from tests.zoo.plugrl_server.messages import ProtocolError, observation_rows, state_signals

# ---------------------------------------------------------------- 10.1: reuse-feedback-obs


class LenientReuse(ZooServer):
    """Lists reuse-feedback-obs but answers a reuse it cannot honour."""

    def check_reuse(self, connection, env_ids, reuse):
        pass


class ReusesTerminalObservation(ZooServer):
    """Lists reuse-feedback-obs but keeps an episode's terminal observation reusable."""

    def remember(self, connection, env, obs):
        if obs is not None:
            super().remember(connection, env, obs)


class ReusesUnknownEnv(ZooServer):
    """Lists reuse-feedback-obs but fills an env it never saw with a blank observation."""

    def check_reuse(self, connection, env_ids, reuse):
        for env, reused in zip(env_ids.tolist(), reuse.tolist(), strict=False):
            if reused and env not in connection.cache:
                connection.cache[env] = {"images": {}, "states": {}, "text": []}
        super().check_reuse(connection, env_ids, reuse)


class RejectsAllRowsReused(ZooServer):
    """Lists reuse-feedback-obs but refuses an infer whose every row is reused (nothing to send)."""

    def check_reuse(self, connection, env_ids, reuse):
        if reuse.all():
            raise ProtocolError("reuse", "the infer carries no observation")
        super().check_reuse(connection, env_ids, reuse)


class CrashesOnIntegerMask(ZooServer):
    """Lists reuse-feedback-obs and dies (close 1011) on a reuse that is not |b1."""

    def read_infer(self, connection, message):
        reuse = message.get("reuse")
        if isinstance(reuse, np.ndarray) and reuse.dtype != np.bool_:
            raise RuntimeError("reuse mask is not boolean")
        return super().read_infer(connection, message)


class RejectsReuse(ZooServer):
    """Lists reuse-feedback-obs but closes on any infer that reuses."""

    def check_reuse(self, connection, env_ids, reuse):
        if reuse.any():
            raise ProtocolError("reuse", "reuse is not really implemented")


class GlobalReuseCache(ZooServer):
    """Keeps one reuse cache for the whole server instead of one per connection."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.shared_cache: dict[int, dict | None] = {}

    def remember(self, connection, env, obs):
        self.shared_cache[env] = obs

    def reusable(self, connection, env):
        return self.shared_cache.get(env)


# ---------------------------------------------------------------- 10.1: malformed or unoffered reuse


class PadsShortReuse(ZooServer):
    """Pairs `reuse` with `env_indices` as far as it goes, so a short reuse is never refused."""

    def read_infer(self, connection, message):
        reuse, envs = message.get("reuse"), message.get("env_indices")
        short = isinstance(reuse, np.ndarray) and isinstance(envs, np.ndarray) and reuse.ndim == 1
        if short and len(reuse) < len(envs):
            padded = np.zeros(len(envs), dtype=np.bool_)
            padded[: len(reuse)] = reuse.astype(np.bool_)
            message = {**message, "reuse": padded}
        return super().read_infer(connection, message)


class TakesFirstRows(ZooServer):
    """Takes as many observation rows as it needs and ignores any extra ones."""

    def check_observation_rows(self, obs: Any, rows: int, kind: str) -> None:
        found = observation_rows(obs, kind)
        if found is not None and found < rows:
            raise ProtocolError(kind, f"the observation has {found} rows, expected {rows}")


class HonoursUnlistedReuse(ZooServer):
    """Implements reuse-feedback-obs but leaves it out of its metadata, and honours a reuse anyway."""

    def default_metadata(self):
        return {**super().default_metadata(), "features": []}


# ---------------------------------------------------------------- 10.1: which observation a reused row gets


class ReusesByPosition(ZooServer):
    """Answers from the observation, but fills a reused row from the last feedback's row at the same
    position in its batch, not from the same env's."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.fed_back: dict[object, list[float | None]] = {}  # per connection, by feedback position
        self.answering: dict[object, np.ndarray] = {}  # per connection, the infer's observation values

    def read_infer(self, connection, message):
        env_ids = super().read_infer(connection, message)
        sent = iter(state_signals(message["data"]))
        reuse = message.get("reuse")
        flags = reuse.tolist() if reuse is not None else [False] * len(env_ids)
        stored = self.fed_back.get(connection.ws, [])
        if any(
            reused and (position >= len(stored) or stored[position] is None) for position, reused in enumerate(flags)
        ):
            raise ProtocolError("reuse", "no observation at that position to reuse")
        self.answering[connection.ws] = np.asarray(
            [stored[position] if reused else next(sent) for position, reused in enumerate(flags)]
        )
        return env_ids

    async def read_feedback(self, connection, frame):
        self.fed_back[connection.ws] = []
        await super().read_feedback(connection, frame)

    def remember(self, connection, env, obs):
        super().remember(connection, env, obs)
        self.fed_back[connection.ws].append(None if obs is None else state_signals(obs)[0])

    def action(self, connection, env_ids):
        values = self.answering[connection.ws].reshape(1, -1, 1)
        return (super().action(connection, env_ids) + values).astype(self.action_dtype)
