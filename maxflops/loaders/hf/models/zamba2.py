"""Zamba2: Zamba2Config, modeling_zamba2; Mamba-2 layers and hybrid layers running a shared transformer block with per-
depth adapters."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType

# Zamba2Config (intermediate_size: null, 4 x hidden_size; num_key_value_heads: null, the heads)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 32000, "hidden_size": 2560, "num_hidden_layers": 54, "mamba_d_state": 64, "mamba_d_conv": 4,
    "mamba_expand": 2, "mamba_ngroups": 1, "n_mamba_heads": 8, "chunk_size": 256, "hidden_act": "gelu",
    "num_attention_heads": 32, "adapter_rank": 128, "use_shared_attention_adapter": False, "num_mem_blocks": 1,
}

_ZAMBA2_DEFAULT_TYPES = (["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3
                         + ["hybrid"] + ["mamba"] * 2)  # Zamba2Config's default layers_block_type
_ZAMBA2_TYPES = {"mamba": "mamba", "m": "mamba", "linear_attention": "mamba", "hybrid": "hybrid", "g": "hybrid"}


def _read(r: Reader, d) -> dict:
    """Zamba2Config: layers_block_type (absent: its default list) of Mamba-2 layers and hybrid layers; a hybrid layer
    is a shared transformer block (one of num_mem_blocks, in turn; attention over [hidden, embedding], 2 x hidden
    wide, heads of 2 x hidden / num_attention_heads, and a gated MLP of intermediate_size, absent: 4 x hidden; its
    per-depth adapters of adapter_rank on the MLP, and on q/k/v with use_shared_attention_adapter), the layer's own
    linear, then a Mamba-2 mixer: maxflops' 'Z' then 'M', neither with an FFN of its own. The Mamba-2 mixer is
    mamba_expand x hidden wide in n_mamba_heads heads."""
    o: dict[str, Any] = {}
    o["emb_dim"] = D = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    if parts.given(r, "layers_block_type"):
        types = r.list("layers_block_type", str)
        if len(types) != n or any(t not in _ZAMBA2_TYPES for t in types):
            raise r.fail("layers_block_type", f"expected {n} entries, each 'mamba' or 'hybrid'")
        types = [_ZAMBA2_TYPES[t] for t in types]
    else:
        types = list(_ZAMBA2_DEFAULT_TYPES)
        if len(types) != n:
            raise r.fail("num_hidden_layers", f"{n}: Zamba2Config's default layers_block_type has {len(types)} "
                                              "layers; give layers_block_type")
    for key in ("kv_channels", "num_query_groups"):  # saved by transformers; modeling_zamba2 never reads them
        if r.has(key):
            r.raw(key, none_ok=True, record=False)
            r.ignore(key, NO_EFFECT + ": modeling_zamba2 never reads it")
    letters = "".join("ZM" if t == "hybrid" else "M" for t in types)
    o["num_decoder_layers"] = len(letters)
    o["attention_layer_pattern"], o["ffn_layer_pattern"] = fit_pattern(list(letters), r, "layers_block_type"), "-"
    heads = r.int("num_mamba_heads" if r.has("num_mamba_heads") else "n_mamba_heads", d("n_mamba_heads"), minimum=1)
    expand = r.int("mamba_expand", d("mamba_expand"), minimum=1)
    if (expand * D) % heads:
        raise r.fail("n_mamba_heads", f"does not divide mamba_expand x hidden_size = {expand * D}", heads)
    o["mamba_num_heads"], o["mamba_head_dim"] = heads, expand * D // heads
    o["mamba_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
    o["mamba_n_groups"] = r.int("mamba_ngroups", d("mamba_ngroups"), minimum=1)
    o["mamba_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
    o["mamba_chunk_size"] = r.int("chunk_size", d("chunk_size"), minimum=1)
    if heads % o["mamba_n_groups"]:
        raise r.fail("mamba_ngroups", f"does not divide the {heads} Mamba heads", o["mamba_n_groups"])
    if "Z" in letters:
        h = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
        kv = r.int("num_key_value_heads", h, minimum=1, none_ok=True)  # absent or null: the heads
        o["num_kv_heads"] = h if kv is None else kv
        width = r.int("intermediate_size", None, minimum=1, none_ok=True, record=False)
        o["zamba_mlp_dim"] = 4 * D if width is None else width
        if width is None:
            r.defaults[r.name("intermediate_size")] = f"{4 * D} (Zamba2Config: 4 x hidden_size)"
        o["zamba_adapter_rank"] = r.int("adapter_rank", d("adapter_rank"), minimum=1)
        o["zamba_attention_adapters"] = r.bool("use_shared_attention_adapter", d("use_shared_attention_adapter"))
        r.ignore("hidden_act", NO_EFFECT + ": the shared block's MLP is gated whatever its activation")
        o["zamba_shared_blocks"] = r.int("num_mem_blocks", d("num_mem_blocks"), minimum=1)
        for key in ("use_mem_rope", "add_bias_linear"):
            if r.has(key):
                r.ignore(key, NO_EFFECT + " (rope, biases)")
    else:
        for key in ("num_attention_heads", "num_key_value_heads", "intermediate_size", "adapter_rank",
                    "use_shared_attention_adapter", "hidden_act", "num_mem_blocks", "use_mem_rope"):
            r.ignore(key, "unused: no hybrid layers")
    # saved by transformers and derived by Zamba2Config.__post_init__ when absent, but a present value is kept (the
    # class sets its kwargs after __post_init__) and modeling_zamba2 sizes its layers by it; the model runs only with
    # the derived value (the shared block's input is [hidden, embedding], its output hidden wide)
    derived = {"attention_hidden_size": 2 * D, "mamba_headdim": expand * D // heads,
               "hybrid_layer_ids": [i for i, t in enumerate(types) if t == "hybrid"]}
    if "Z" in letters:
        derived["attention_head_dim"] = 2 * D // o["num_query_heads"]
    for key in ("attention_head_dim", "attention_hidden_size", "mamba_headdim", "hybrid_layer_ids"):
        if r.has(key):
            value = r.raw(key, none_ok=True, record=False)
            if key in derived and value != derived[key]:
                raise r.fail(key, f"differs from {derived[key]!r}, the value Zamba2Config derives; transformers "
                                  "keeps the file's and its model cannot run with it", value)
            r.ignore(key, "derived: the value Zamba2Config gives it, checked")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
