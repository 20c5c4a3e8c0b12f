"""Write a tiny randomly-initialised Llama as one GGUF file, for llama-cpp-python's server.

Run with the llama-cpp venv's python (it has `gguf` and numpy): `python tiny_gguf.py OUT.gguf`.
Nothing is downloaded: the weights are random (seeded, float32), and the tokenizer is a
SentencePiece-style ("llama") vocabulary described wholly in the metadata: three control
tokens, the 256 byte-fallback tokens (so any text encodes), and the printable ASCII
characters with and without the word-start mark. The chat template is our own, stored as
`tokenizer.chat_template`, which the server renders with Jinja when no chat format is given.
Takes well under a second and writes about half a megabyte.
"""

from __future__ import annotations

import sys

EMBED = 64
HEADS = 4
KV_HEADS = 2
LAYERS = 2
FEED_FORWARD = 128
CONTEXT = 2048
WORD_START = "\u2581"  # SentencePiece's mark for a space before a piece
CONTROL = ["<unk>", "<s>", "</s>"]
# Plain role-tagged turns; tools, when sent, are listed once up front.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% if tools %}<|tools|>{{ tools | tojson }}\n{% endif %}"
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] or '' }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """Tokens, their merge scores and their types (gguf.TokenType values)."""
    from gguf import TokenType

    tokens = list(CONTROL)
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL]
    tokens += [f"<0x{byte:02X}>" for byte in range(256)]
    types += [TokenType.BYTE] * 256
    characters = [chr(code) for code in range(33, 127)]
    pieces = [WORD_START, *characters, *(WORD_START + c for c in characters if c.isalnum())]
    tokens += pieces
    types += [TokenType.NORMAL] * len(pieces)
    # A longer piece scores lower, so single characters are there to merge from.
    scores = [0.0] * (len(CONTROL) + 256) + [-float(len(piece)) for piece in pieces]
    return tokens, scores, [int(t) for t in types]


def main(out: str) -> None:
    import numpy as np
    from gguf import GGUFWriter, LlamaFileType

    tokens, scores, types = vocabulary()
    head_dim = EMBED // HEADS
    writer = GGUFWriter(out, "llama")
    writer.add_name("rlconform tiny random llama")
    writer.add_file_type(LlamaFileType.ALL_F32)
    writer.add_vocab_size(len(tokens))
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(True)
    writer.add_chat_template(CHAT_TEMPLATE)

    rng = np.random.default_rng(0)

    def weight(rows: int, cols: int, scale: float = 0.02) -> np.ndarray:
        return rng.normal(0.0, scale, size=(rows, cols)).astype(np.float32)

    # Every embedding carries the same large first component, which the small random blocks leave
    # standing, and the quote's output row reads it: greedy decoding writes quotes, so a tool call
    # forced through a JSON grammar closes its string and its object and ends.
    embeddings = weight(len(tokens), EMBED, 0.5)
    embeddings[:, 0] = 8.0
    output = weight(len(tokens), EMBED, 0.5)
    output[:, 0] = 0.0
    output[tokens.index('"'), 0] = 2.0
    ones = np.ones(EMBED, dtype=np.float32)
    writer.add_tensor("token_embd.weight", embeddings)
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", output)
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", ones)
        writer.add_tensor(f"{block}.attn_q.weight", weight(HEADS * head_dim, EMBED))
        writer.add_tensor(f"{block}.attn_k.weight", weight(KV_HEADS * head_dim, EMBED))
        writer.add_tensor(f"{block}.attn_v.weight", weight(KV_HEADS * head_dim, EMBED))
        writer.add_tensor(f"{block}.attn_output.weight", weight(EMBED, HEADS * head_dim))
        writer.add_tensor(f"{block}.ffn_norm.weight", ones)
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(FEED_FORWARD, EMBED))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(FEED_FORWARD, EMBED))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(EMBED, FEED_FORWARD))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main(sys.argv[1])
