"""Write a tiny randomly-initialised Llama and a byte-level BPE tokenizer trained here, for `transformers serve`.

Run with the transformers venv's python: `python tiny_model.py OUT_DIR [HEAD_DIM]` (16 by
default; vLLM's CPU attention takes 64, see tests/realpeers/vllm). Nothing is
downloaded: the tokenizer is trained on a few lines written below, the weights are
random (seeded), and the chat template is our own. Takes a second or two.
"""

from __future__ import annotations

import sys

CORPUS = [
    "The sea is wide and the sky is blue.",
    "Repeat this code exactly, and nothing else.",
    "Use the get_weather tool to look up the weather in Paris.",
    "Count from one to twenty in words, separated by spaces.",
    "Name a colour. Describe the sea in two short sentences.",
    "Hello. Hi. Summarize: go go go.",
]
MAX_NEW_TOKENS = 16
SPECIAL = ["<|bos|>", "<|eos|>", "<|pad|>"]
# Plain role-tagged turns; tools, when sent, are listed once up front.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% if tools %}<|tools|>{{ tools | tojson }}\n{% endif %}"
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] or '' }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def main(out: str, head_dim: int = 16) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=384, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<|bos|>", eos_token="<|eos|>", pad_token="<|pad|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=4 * head_dim,
        intermediate_size=8 * head_dim,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=head_dim,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    # A random model never ends on its own: keep a request without max_tokens short.
    model.generation_config.max_new_tokens = MAX_NEW_TOKENS
    model.generation_config.do_sample = False
    model.save_pretrained(out)


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
