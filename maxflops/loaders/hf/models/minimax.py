"""MiniMax-01 / M1: MiniMaxConfig, modeling_minimax; lightning attention and softmax attention layers (windowed on
every layer with a sliding_window), MoE on every layer."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# MiniMaxConfig (head_dim: null, the model uses hidden_size // num_attention_heads)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_experts_per_tok": 2,
    "num_local_experts": 8, "sliding_window": None, "block_size": 256,
}

def _layers(r: Reader, d, n: int):
    """MiniMaxConfig's layer types: layer_types, else softmax attention on the even 0-based layers and lightning
    attention on the odd ones; the softmax layers are windowed on every layer when sliding_window is set (the
    model's mask; layer_types does not say)."""
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True)
    full = "L" if window is not None else "G"
    kinds = {"full_attention": full, "linear_attention": "N"}
    if parts.given(r, "layer_types"):
        types = r.list("layer_types", str)
        if len(types) != n or any(t not in kinds for t in types):
            raise r.fail("layer_types", f"expected {n} entries, each 'full_attention' or 'linear_attention'")
        return [kinds[t] for t in types], "layer_types"
    return [full if (i + 1) % 2 else "N" for i in range(n)], "num_hidden_layers"


def _lightning(r: Reader, d, o: dict, pattern: str) -> None:
    if "N" in pattern:  # its heads and head width are the attention's (lightning_* left at 0)
        o["lightning_block_size"] = r.int("block_size", d("block_size"), minimum=1)
    else:
        r.ignore("block_size", "unused: no lightning attention layers")


TYPE = HFType(defaults=DEFAULTS, ffn=parts.local_experts(experts_alias="num_experts"), dense_key=None,
              layers=_layers, extras=(_lightning,))
