"""Real RLlib 2.60 as an RLlink server: PPO on CartPole's spaces with the external-inference env runner.

Run with the RLlib venv's python (`~/.cache/rlconform-peers/rllib/bin/python`), never the project's:

    python rllib_driver.py --port P --ray-dir DIR

num_env_runners=0, so the local runner (worker index 0) is both the listener on
P and the one sampled (fact sheet section 3.1). Prints `READY <port>` once the
algorithm is built, then trains until killed: each train() waits for a client's
episodes.
"""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ray-dir", required=True, help="Ray's temp dir (short: its socket paths live there)")
    parser.add_argument("--fragment-length", type=int, default=256)
    args = parser.parse_args()

    import gymnasium as gym
    import numpy as np
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.external.env_runner_server_for_external_inference import (
        EnvRunnerServerForExternalInference,
    )

    ray.init(num_cpus=1, include_dashboard=False, _temp_dir=args.ray_dir, log_to_driver=False)
    config = (
        PPOConfig()
        .environment(
            observation_space=gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
            action_space=gym.spaces.Discrete(2),
            env_config={"port": args.port},
        )
        .env_runners(
            env_runner_cls=EnvRunnerServerForExternalInference,
            num_env_runners=0,
            rollout_fragment_length=args.fragment_length,
        )
        .training(train_batch_size_per_learner=args.fragment_length, minibatch_size=64, num_epochs=2)
    )
    algo = config.build_algo()
    print(f"READY {args.port}", flush=True)
    iteration = 0
    while True:
        algo.train()
        iteration += 1
        print(f"trained {iteration}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
