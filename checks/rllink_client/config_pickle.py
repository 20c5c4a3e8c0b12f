"""The msgpack dialect's SET_CONFIG `config`, written opcode by opcode: no Ray in the checker.

RLlib sends `pickle.dumps(AlgorithmConfig)`; its client unpickles it, builds
the RLModule from `get_rl_module_spec()` and reads `get_rollout_fragment_length()`.
This stream, when a client with Ray unpickles it, calls `PPOConfig()` (so every
default is set) and then sets the observation space, the action space and the
fragment length on it (BUILD: a dict update, as AlgorithmConfig has no
__setstate__). The checker never unpickles anything; checks.rllink.pickle_scan
reads the fragment length back from these opcodes.
"""

from __future__ import annotations

import math
import pickle
import struct

_CONFIG_CLASS = ("ray.rllib.algorithms.ppo.ppo", "PPOConfig")
_BOX = ("gymnasium.spaces.box", "Box")
_DISCRETE = ("gymnasium.spaces.discrete", "Discrete")
_FLOAT32 = ("numpy", "float32")


def _global(module: str, name: str) -> bytes:
    return pickle.GLOBAL + f"{module}\n{name}\n".encode("ascii")


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return pickle.BINUNICODE + struct.pack("<I", len(data)) + data


def _int(value: int) -> bytes:
    return pickle.BININT + struct.pack("<i", value)


def _float(value: float) -> bytes:
    return pickle.BINFLOAT + struct.pack(">d", value)


def _call(callable_: bytes, *args: bytes) -> bytes:
    return callable_ + pickle.MARK + b"".join(args) + pickle.TUPLE + pickle.REDUCE


def config_pickle(obs_dim: int, actions: int, fragment_length: int) -> bytes:
    """A PPOConfig with Box(-inf, inf, (obs_dim,), float32), Discrete(actions) and the fragment length."""
    box = _call(
        _global(*_BOX),
        _float(-math.inf),
        _float(math.inf),
        pickle.MARK + _int(obs_dim) + pickle.TUPLE,
        _global(*_FLOAT32),
    )
    settings = (
        _text("observation_space") + box,
        _text("action_space") + _call(_global(*_DISCRETE), _int(actions)),
        _text("rollout_fragment_length") + _int(fragment_length),
    )
    return (
        pickle.PROTO
        + bytes([2])
        + _global(*_CONFIG_CLASS)
        + pickle.EMPTY_TUPLE
        + pickle.REDUCE
        + pickle.EMPTY_DICT
        + pickle.MARK
        + b"".join(settings)
        + pickle.SETITEMS
        + pickle.BUILD
        + pickle.STOP
    )
