"""Zamba (1): ZambaConfig, modeling_zamba; Mamba-1 layers and hybrid layers running one shared transformer block."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts, ssm
from ..house import HFType

# ZambaConfig (attention_hidden_size / attention_head_dim null: 2 x hidden_size, and that over the heads;
# mamba_dt_rank "auto": ceil(hidden_size / 16))
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 32000, "hidden_size": 3712, "intermediate_size": 14848, "num_hidden_layers": 76,
    "num_attention_heads": 16, "num_key_value_heads": 16, "n_mamba_heads": 2, "attn_layer_period": 6,
    "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": "auto",
}

# ZambaConfig's block names, as remap_legacy_layer_types leaves them
_TYPES = {"mamba": "mamba", "linear_attention": "mamba", "hybrid": "hybrid"}


def _block_types(r: Reader, d, n: int) -> list:
    """layers_block_type, or ZambaConfig's default: two Mamba layers, a hybrid one, then a hybrid layer wherever
    i % attn_layer_period == attn_layer_offset over the remaining num_hidden_layers - 3 (the list is then n long)."""
    if parts.given(r, "layers_block_type"):
        types = r.list("layers_block_type", str)
        if len(types) != n or any(t not in _TYPES for t in types):
            raise r.fail("layers_block_type", f"expected {n} entries (num_hidden_layers), each 'mamba' or 'hybrid'")
        for key in ("attn_layer_period", "attn_layer_offset"):
            if r.has(key):
                r.ignore(key, "superseded by layers_block_type (ZambaConfig reads them only without it)")
        return [_TYPES[t] for t in types]
    period = r.int("attn_layer_period", d("attn_layer_period"), minimum=1)
    offset = r.int("attn_layer_offset", d("attn_layer_offset"))
    if n < 3:
        raise r.fail("num_hidden_layers", "ZambaConfig's default layers_block_type has 3 layers before its "
                                          "periodic ones: give layers_block_type", n)
    return ["mamba", "mamba", "hybrid"] + ["hybrid" if i % period == offset else "mamba" for i in range(n - 3)]


def _read(r: Reader, d) -> dict:
    """ZambaConfig: layers_block_type of Mamba-1 layers and hybrid layers. A hybrid layer runs the one shared
    transformer block (attention over [hidden, embedding], 2 x hidden wide, heads of attention_head_dim (absent: that
    over num_attention_heads), num_key_value_heads of them for keys and values, o_proj to hidden; a gated MLP of
    intermediate_size), the layer's own linear, then its Mamba-1 mixer: maxflops' 'Z' then 'A', neither with an FFN.
    The Mamba mixer is mamba_expand x hidden wide, split into n_mamba_heads heads each with its own x_proj and
    dt_proj: per head head_dim -> dt rank + 2 state and dt rank -> head_dim, the same multiply-adds as one head of the
    whole width, and a scan per channel as Mamba-1's."""
    o: dict[str, Any] = {}
    o["emb_dim"] = D = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    types = _block_types(r, d, n)
    letters = "".join("ZA" if t == "hybrid" else "A" for t in types)
    o["num_decoder_layers"] = len(letters)
    o["attention_layer_pattern"], o["ffn_layer_pattern"] = fit_pattern(list(letters), r, "layers_block_type"), "-"
    expand = r.int("mamba_expand", d("mamba_expand"), minimum=1)
    heads = r.int("n_mamba_heads", d("n_mamba_heads"), minimum=1)
    if (expand * D) % heads:
        raise r.fail("n_mamba_heads", f"does not divide mamba_expand x hidden_size = {expand * D}", heads)
    o["mamba1_inner_dim"] = expand * D
    o["mamba1_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
    o["mamba1_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
    o["mamba1_dt_rank"] = ssm.dt_rank(r, "mamba_dt_rank", d, D)
    r.ignore("hidden_mamba_act", NO_EFFECT + ": the mixer's conv activation")
    # ZambaConfig derives attention_hidden_size when null; the model concatenates [hidden, embedding] and runs only
    # with 2 x hidden_size
    if r.has("attention_hidden_size"):
        value = r.raw("attention_hidden_size", none_ok=True, record=False)
        if value and value != 2 * D:  # null or 0: derived (ZambaConfig's `or`)
            raise r.fail("attention_hidden_size", f"differs from {2 * D}, 2 x hidden_size: the shared block's input "
                                                  "is [hidden, embedding] and modeling_zamba cannot run with it",
                         value)
        r.ignore("attention_hidden_size", "derived: 2 x hidden_size, checked")
    if "Z" in letters:
        h = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
        o["num_kv_heads"] = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1)
        if h % o["num_kv_heads"]:
            raise r.fail("num_key_value_heads", f"does not divide the {h} attention heads", o["num_kv_heads"])
        hd = r.int("attention_head_dim", None, minimum=0, none_ok=True) or None  # null or 0: derived (its `or`)
        if hd is None and (2 * D) % h:
            raise r.fail("num_attention_heads", f"does not divide 2 x hidden_size = {2 * D} (ZambaConfig's head "
                                                "width when attention_head_dim is absent)", h)
        o["zamba_head_dim"] = 0 if hd is None or hd == 2 * D // h else hd
        o["zamba_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        o["zamba_adapter_rank"], o["zamba_attention_adapters"] = 0, False
        r.ignore("hidden_act", NO_EFFECT + ": the shared block's MLP is gated whatever its activation")
    else:
        for key in ("num_attention_heads", "num_key_value_heads", "intermediate_size", "attention_head_dim",
                    "hidden_act"):
            r.ignore(key, "unused: no hybrid layers")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
