"""Training samples from recorded turns, as the reference server's /samples assembles them."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.session.samples import WireSample
from checks.session.template import decode
from checks.session.trajectory import Turn

STATUS = {"stop": "completed", "tool_calls": "completed", "length": "truncated", "abort": "aborted"}
ABSENT_TENSORS = ["rollout_routed_experts", "rollout_indexer_topk"]


def path_sample(path: list[Turn], max_seq_len: int | None, trained: set[int]) -> WireSample | None:
    """One sample for a root-to-leaf path; None when `max_seq_len` cuts into the first prompt.

    Completions of turns in `trained` (already trained by an earlier kept leaf) get loss 0.
    """
    tokens = path[-1].token_ids
    prompt_length = len(path[0].prompt_ids)
    loss_mask = np.zeros(len(tokens) - prompt_length, dtype=np.uint8)
    log_probs = np.zeros(len(tokens) - prompt_length, dtype=np.float64)
    for turn in path:
        start = len(turn.prompt_ids) - prompt_length
        span = slice(start, start + len(turn.completion_ids))
        log_probs[span] = turn.logprobs
        if turn.seq not in trained:
            loss_mask[span] = 1
    status = STATUS.get(path[-1].finish_reason, "completed")
    if max_seq_len is not None:
        if max_seq_len < prompt_length:
            return None
        if len(tokens) > max_seq_len:
            tokens, status = tokens[:max_seq_len], "truncated"
            loss_mask, log_probs = loss_mask[: max_seq_len - prompt_length], log_probs[: max_seq_len - prompt_length]
    response = tokens[prompt_length:]
    fields: dict[str, Any] = {
        "response": decode(response),
        "response_length": len(response),
        "status": status,
        "weight_versions": [
            t.record["response"]["choices"][0].get("meta_info", {}).get("weight_version") for t in path
        ],
        "prefix_cache_info": None,
        "metadata": {},
        "nulls": list(ABSENT_TENSORS),
    }
    tensors = {
        "tokens": np.asarray(tokens, dtype=np.int64),
        "loss_mask": loss_mask,
        "rollout_log_probs": log_probs,
    }
    return WireSample(tensors, fields)
