"""Ling's hybrid (bailing_hybrid): BailingHybridConfig, modeling_bailing_hybrid; linear-attention layers (Kimi delta
attention: q, k, v and their causal conv, a full-rank forget gate f_proj, beta, a full-rank output gate g_proj) and,
every layer_group_size-th, MLA with a sigmoid gate per head (g_proj D -> heads: attention_head_gate); DeepSeek's MoE
after first_k_dense_replace dense layers; MTP modules (num_nextn_predict_layers; transformers builds none).

The class's fields are saved under its attribute map's names (num_experts, num_experts_per_token, num_shared_experts,
num_nextn_predict_layers, ...). The linear layers' widths: linear_head_dim, linear_num_heads, linear_conv_kernel_dim
when the file carries them (keyword arguments the class sets after deriving them), else head_dim,
num_attention_heads and short_conv_kernel_size (its __post_init__; head_dim then becomes qk_rope_head_dim)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# BailingHybridConfig (under its attribute map's names: num_experts, num_experts_per_token, num_shared_experts)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 157184, "hidden_size": 2560, "intermediate_size": 6144, "moe_intermediate_size": 768,
    "num_hidden_layers": 42, "num_attention_heads": 32, "num_key_value_heads": 32, "num_shared_experts": 1,
    "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "num_experts_per_token": 8, "first_k_dense_replace": 2, "hidden_act": "silu", "num_nextn_predict_layers": 1,
    "num_experts": 512, "head_dim": 128, "short_conv_kernel_size": 4, "layer_group_size": 6,
}


def _layers(r: Reader, d, n: int):
    """layer_types ('full_attention': MLA, 'linear_attention': Kimi delta attention), else MLA on every
    layer_group_size-th layer (1-based)."""
    if parts.given(r, "layer_types"):
        r.ignore("layer_group_size", "superseded by layer_types")
        return parts.layer_types(r, n, {"full_attention": "G", "linear_attention": "K"}), "layer_types"
    group = r.int("layer_group_size", d("layer_group_size"), minimum=1)
    return ["G" if (i + 1) % group == 0 else "K" for i in range(n)], "layer_group_size"


def _moe(r: Reader, d, o: dict, n: int):
    """DeepSeek's MoE under the saved names: num_experts (the field num_local_experts) of moe_intermediate_size, top
    num_experts_per_token, num_shared_experts shared; MoE where mlp_layer_types says sparse, else from layer
    first_k_dense_replace on."""
    o["num_experts"] = parts.alias(r, "num_experts", "num_local_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = parts.alias(r, "num_experts_per_token", "num_experts_per_tok",
                                           d("num_experts_per_token"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = parts.alias(r, "num_shared_experts", "n_shared_experts", d("num_shared_experts"))
    if parts.given(r, "mlp_layer_types"):
        r.ignore("first_k_dense_replace", "superseded by mlp_layer_types")
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    return [l >= k for l in range(n)], "first_k_dense_replace"


def _linear(r: Reader, d, o: dict, pattern: str) -> None:
    """The MLA layers' head gate, the linear layers' widths and gates, the MTP modules."""
    o["attention_head_gate"] = True  # BailingHybridAttention's g_proj: D -> heads
    if "K" in pattern:
        if parts.given(r, "linear_head_dim"):
            o["kda_head_dim"] = r.int("linear_head_dim", minimum=1)
        else:  # (the MLA reader set head_dim aside: here it sizes the linear heads)
            o["kda_head_dim"] = r.defaults[r.name("linear_head_dim")] = r.int("head_dim", d("head_dim"), minimum=1)
            r.ignored.pop(r.name("head_dim"), None)
        if parts.given(r, "linear_num_heads"):
            o["kda_num_heads"] = r.int("linear_num_heads", minimum=1)
        else:
            o["kda_num_heads"] = r.defaults[r.name("linear_num_heads")] = o["num_query_heads"]
        if parts.given(r, "linear_conv_kernel_dim"):
            o["kda_conv_kernel"] = r.int("linear_conv_kernel_dim", minimum=1)
            r.ignore("short_conv_kernel_size", "superseded by linear_conv_kernel_dim")
        else:
            o["kda_conv_kernel"] = r.defaults[r.name("linear_conv_kernel_dim")] = \
                r.int("short_conv_kernel_size", d("short_conv_kernel_size"), minimum=1)
        o["kda_full_rank_gate"] = o["kda_full_rank_forget_gate"] = True  # g_proj, f_proj: D -> heads x head_dim
    else:
        for key in ("linear_head_dim", "linear_num_heads", "linear_conv_kernel_dim", "short_conv_kernel_size"):
            r.ignore(key, "unused: no linear-attention layers")
    o["mtp_num_layers"] = parts.alias(r, "num_nextn_predict_layers", "num_mtp_layers",
                                      d("num_nextn_predict_layers"))
    for key in ("kda_safe_gate", "kda_lower_bound"):
        r.ignore(key, NO_EFFECT + " (the forget gate's bounds: elementwise)")
    r.ignore("mtp_loss_scaling_factor", NO_EFFECT + " (the MTP loss's weight; its modules are counted in training)")


TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(), ffn=_moe, layers=_layers, extras=(_linear,),
              dense_key="intermediate_size")
