"""StableLM (StableLM-3B-4E1T, StableLM 2): StableLmConfig, modeling_stablelm; GQA with head_dim hidden_size //
heads, a gated MLP, global attention (use_parallel_residual: the same matmuls)."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# StableLmConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50304, "intermediate_size": 6912, "hidden_size": 2560, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu",
}


def _attention(r: Reader, d, o: dict) -> None:
    """StableLmAttention: head_dim is hidden_size // num_attention_heads (which must divide it); the class has no
    head_dim field and the attention never reads one (the rotary embedding's getattr is RoPE only)."""
    heads, width = o["num_query_heads"], o["emb_dim"]
    if width % heads:
        raise r.fail("num_attention_heads", f"does not divide hidden_size={width} (StableLmAttention refuses it)")
    o["head_dim"] = width // heads
    r.ignore("head_dim", "not read by StableLmAttention (head_dim is hidden_size // num_attention_heads)")


TYPE = HFType(
    defaults=DEFAULTS, attention=_attention,
    no_effect={"use_qkv_bias": "biases of q, k and v (no matmul)",
               "qk_layernorm": "per-head LayerNorms on q and k (no matmul)",
               "use_parallel_residual": "attention and MLP read the same normed input and are summed into the "
                                        "residual together: the same matmuls as the sequential layer"},
)
