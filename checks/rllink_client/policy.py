"""The policy rlconform serves as the RLlib server, and its own forward pass.

It has the shape of RLlib 2.60's default PPO module for a Box observation and
a Discrete action space (two tanh layers of 256, then a linear head), named as
the inference-only module's state names it, so RLlib's own client loads it
into the module it builds from the config. Each "training" step perturbs every
weight and raises weights_seq_no by one; every version is kept, so a stale
client's dist inputs can be matched to the version it used.
"""

from __future__ import annotations

import numpy as np

from checks.rllink.onnx_policy import Layer, onnx_file

HIDDEN = 256
ENCODER = "encoder.actor_encoder.net.mlp"
HEAD = "pi.net.mlp.0"
LOG_STD_CLIP = np.asarray([20.0], dtype=np.float32)  # a constant buffer the module's state carries


class Policy:
    def __init__(self, obs_dim: int, actions: int, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        sizes = [(HIDDEN, obs_dim), (HIDDEN, HIDDEN), (actions, HIDDEN)]
        self.layers: list[Layer] = [
            (
                self.rng.uniform(-1, 1, size).astype(np.float32) / np.sqrt(size[1]),
                self.rng.uniform(-0.1, 0.1, size[0]).astype(np.float32),
            )
            for size in sizes
        ]
        self.seq = 0
        self.versions: dict[int, list[Layer]] = {0: self.layers}

    def train(self) -> None:
        self.layers = [
            (
                (w + self.rng.normal(0, 0.2 / np.sqrt(w.shape[1]), w.shape)).astype(np.float32),
                (b + self.rng.normal(0, 0.05, b.shape)).astype(np.float32),
            )
            for w, b in self.layers
        ]
        self.seq += 1
        self.versions[self.seq] = self.layers

    def module_state(self) -> dict[str, np.ndarray]:
        """The msgpack dialect's `rl_module`: parameter name -> array."""
        (w0, b0), (w2, b2), (wp, bp) = self.layers
        return {
            f"{ENCODER}.0.weight": w0,
            f"{ENCODER}.0.bias": b0,
            f"{ENCODER}.2.weight": w2,
            f"{ENCODER}.2.bias": b2,
            "pi.log_std_clip_param_const": LOG_STD_CLIP,
            f"{HEAD}.weight": wp,
            f"{HEAD}.bias": bp,
        }

    def onnx(self) -> str:
        return onnx_file(self.layers, activation="Tanh")


def forward(layers: list[Layer], obs: np.ndarray) -> np.ndarray:
    """Logits [n, actions] for observations [n, obs_dim]: tanh after every layer but the last, in float32."""
    x = np.asarray(obs, dtype=np.float32)
    for index, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if index < len(layers) - 1:
            x = np.tanh(x)
    return x


def layers_from_state(module: dict[str, np.ndarray]) -> list[Layer]:
    """The layers a msgpack SET_STATE's rl_module holds (KeyError when a name is missing)."""
    return [(module[f"{name}.weight"], module[f"{name}.bias"]) for name in (f"{ENCODER}.0", f"{ENCODER}.2", HEAD)]


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    out: np.ndarray = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return out
