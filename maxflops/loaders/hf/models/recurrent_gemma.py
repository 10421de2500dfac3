"""RecurrentGemma (Griffin): RecurrentGemmaConfig, modeling_recurrent_gemma; Griffin's recurrent blocks (a causal
conv and the RG-LRU) and local (sliding-window) MQA/GQA attention, cycled by block_types, each layer with a gated
MLP of intermediate_size // 2."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType

# RecurrentGemmaConfig (lru_width null: hidden_size; num_key_value_heads null: the heads; head_dim: absent,
# hidden_size // num_attention_heads, a present one kept)
DEFAULTS = {
    "tie_word_embeddings": True,
    "num_hidden_layers": 26, "vocab_size": 256000, "hidden_size": 2560, "intermediate_size": 7680,
    "num_attention_heads": 10, "attention_window_size": 2048, "conv1d_width": 4,
    "hidden_activation": "gelu_pytorch_tanh", "block_types": ["recurrent", "recurrent", "attention"],
}
_BLOCKS = {"recurrent": "R", "attention": "L"}


def _read(r: Reader, d) -> dict:
    """RecurrentGemmaConfig: num_hidden_layers layers whose temporal block cycles through block_types (a recurrent
    block, 'R', or local attention over attention_window_size keys, 'L'), each then a gated MLP of
    intermediate_size // 2 (its activation hidden_activation). The recurrent block is lru_width wide (null:
    hidden_size), its gates block-diagonal in num_attention_heads blocks, its conv conv1d_width taps. Attention:
    num_attention_heads heads of head_dim (absent: hidden_size // heads), num_key_value_heads (null: the heads)."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    D = o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    types = r.list("block_types", str, d("block_types"))
    if not types or any(t not in _BLOCKS for t in types):
        raise r.fail("block_types", "expected a non-empty list of 'recurrent' and 'attention'")
    letters = [_BLOCKS[types[i % len(types)]] for i in range(n)]  # (block_types * 100)[:num_hidden_layers]
    o["attention_layer_pattern"] = fit_pattern(letters, r, "block_types")
    act = r.activation("hidden_activation", d("hidden_activation"))
    o["mlp_activations"] = (act, "linear")
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=2) // 2
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    if "R" in letters:
        width = r.int("lru_width", None, minimum=1, none_ok=True)
        o["rglru_width"] = 0 if width is None or width == D else width
        if (width or D) % heads:
            raise r.fail("num_attention_heads", f"does not divide lru_width={width or D} (the RG-LRU's gates are "
                                                "block-diagonal in num_attention_heads blocks)", heads)
        o["rglru_num_heads"] = heads
        o["rglru_conv_kernel"] = r.int("conv1d_width", d("conv1d_width"), minimum=1)
    else:
        for key in ("lru_width", "conv1d_width"):
            r.ignore(key, "unused: no recurrent blocks")
    if "L" in letters:
        kv = r.int("num_key_value_heads", heads, minimum=1, none_ok=True)
        o["num_kv_heads"] = heads if kv is None else kv
        parts.gqa(r, lambda key: d(key), o)
        o["sliding_window_size"] = r.int("sliding_window", d("attention_window_size"), minimum=1)
    else:
        for key in ("num_key_value_heads", "head_dim", "sliding_window"):
            r.ignore(key, "unused: no attention blocks")
    for key in ("logits_soft_cap", "w_init_variance_scale", "final_w_init_variance_scale", "embeddings_scale_by_sqrt_dim"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (a cap, a scale or an initialisation)")
    return o


# RecurrentGemmaConfig's attribute_map: sliding_window is attention_window_size
TYPE = HFType(defaults=DEFAULTS, read=_read, attribute_map={"sliding_window": "attention_window_size"})
