"""LFM2 (Liquid AI): Lfm2Config, modeling_lfm2. Each layer is a gated short conv (``Lfm2ShortConv``, 'conv' in
layer_types: in_proj to B, C, x; a causal depthwise conv over B x of conv_L_cache taps; out_proj) or GQA attention
('full_attention'), then a SiLU-gated MLP whose width Lfm2MLP derives from intermediate_size."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType

# Lfm2Config (layer_types / full_attn_idxs: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 65536, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "conv_L_cache": 3, "block_multiple_of": 256,
    "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": True,
}


def mlp_width(r: Reader, d) -> int:
    """Lfm2MLP: with block_auto_adjust_ff_dim, int(2 F / 3); then, with a block_ffn_dim_multiplier (null: none),
    int(multiplier x that) rounded up to a multiple of block_multiple_of. F is intermediate_size (block_ff_dim, an
    older name the class pops into it)."""
    if r.has("block_ff_dim"):
        if r.has("intermediate_size"):
            r.ignore("intermediate_size", "superseded by block_ff_dim (Lfm2Config pops it into intermediate_size)")
        width = r.int("block_ff_dim", minimum=1)
    else:
        width = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    keys = ("block_ffn_dim_multiplier", "block_multiple_of")
    if not r.bool("block_auto_adjust_ff_dim", d("block_auto_adjust_ff_dim")):
        for key in keys:
            r.ignore(key, "unused: block_auto_adjust_ff_dim is false")
        return width
    width = int(2 * width / 3)
    if r.raw("block_ffn_dim_multiplier", d("block_ffn_dim_multiplier"), none_ok=True, record=False) is None:
        r.ignore("block_ffn_dim_multiplier", NO_EFFECT + " (null: no multiplier, no rounding)")
        r.ignore("block_multiple_of", "unused: block_ffn_dim_multiplier is null")
        return width
    multiplier = r.float("block_ffn_dim_multiplier", d("block_ffn_dim_multiplier"))
    step = r.int("block_multiple_of", d("block_multiple_of"), minimum=1)
    width = int(multiplier * width)
    return step * ((width + step - 1) // step)


def _layers(r: Reader, n: int):
    """layer_types, else (Lfm2Config's rule) 'full_attention' at full_attn_idxs (null: every layer), 'conv' elsewhere."""
    if parts.given(r, "layer_types"):
        r.ignore("full_attn_idxs", "superseded by layer_types")
        return parts.layer_types(r, n, {"G", "V"}), "layer_types"
    idxs = r.raw("full_attn_idxs", None, none_ok=True)
    if idxs is None:
        return ["G"] * n, "num_hidden_layers"
    if not isinstance(idxs, list) or any(type(i) is not int or not 0 <= i < n for i in idxs):
        raise r.fail("full_attn_idxs", f"expected a list of layer indices in 0..{n - 1}", idxs)
    return ["G" if i in idxs else "V" for i in range(n)], "full_attn_idxs"


def older_tie(r: Reader, o: dict) -> None:
    """Lfm2Config and Lfm2MoeConfig pop ``tie_embedding`` into tie_word_embeddings (given both, the older name
    wins)."""
    if r.has("tie_embedding"):
        o["logits_via_embedding"] = r.bool("tie_embedding")


def trunk(r: Reader, d) -> dict:
    """What LFM2 and LFM2-MoE read alike: the widths, GQA heads (Lfm2Attention: getattr(config, "head_dim",
    hidden_size // num_attention_heads)) and the SiLU-gated MLP's activation."""
    o: dict = {}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1, none_ok=True)
    o["num_kv_heads"] = heads if kv is None else kv
    parts.gqa(r, d, o)
    r.ignore("hidden_act", "not read: the MLP's activation is SiLU")
    o["mlp_activations"] = ("silu", "linear")  # w2(silu(w1 x) * w3 x)
    return o


def short_conv(r: Reader, d, o: dict, pattern: str) -> None:
    """The short conv's width (conv_L_cache) where a layer has one; its bias changes no FLOPs."""
    if "V" in pattern:
        o["short_conv_kernel"] = r.int("conv_L_cache", d("conv_L_cache"), minimum=1)
    else:
        r.ignore("conv_L_cache", "unused: no short-conv layers")
    r.ignore("conv_bias", NO_EFFECT)


def _read(r: Reader, d) -> dict:
    o = trunk(r, d)
    o["mlp_dim"] = mlp_width(r, d)
    letters, key = _layers(r, o["num_decoder_layers"])
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    short_conv(r, d, o, pattern)
    older_tie(r, o)
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
