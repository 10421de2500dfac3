"""LFM2-MoE (Liquid AI): Lfm2MoeConfig, modeling_lfm2_moe. LFM2's layers (gated short convs and GQA attention, by
layer_types, which the model requires), each then an FFN: the first num_dense_layers a SiLU-gated MLP of
intermediate_size (no width adjustment), the rest a top-k MoE of SiLU-gated experts of moe_intermediate_size behind a
router D -> E (its expert bias and scaling change no FLOPs); no shared expert."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType
from .lfm2 import older_tie, short_conv, trunk

# Lfm2MoeConfig
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 65536, "hidden_size": 2048, "intermediate_size": 7168, "moe_intermediate_size": 1792,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "conv_L_cache": 3,
    "num_dense_layers": 2, "num_experts_per_tok": 4, "num_experts": 32,
}


def _read(r: Reader, d) -> dict:
    o = trunk(r, d)
    n = o["num_decoder_layers"]
    if not parts.given(r, "layer_types"):
        raise r.fail("layer_types", "required: Lfm2MoeDecoderLayer reads config.layer_types[layer_idx] (no rule "
                                    "fills it in)")
    letters = parts.layer_types(r, n, {"G", "V"})
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, "layer_types")
    short_conv(r, d, o, pattern)
    dense = min(r.int("num_dense_layers", d("num_dense_layers"), minimum=0), n)
    if dense < n:
        o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=2)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        if dense:
            o["first_num_dense_layers"] = dense
    else:
        for key in ("num_experts", "num_experts_per_tok", "moe_intermediate_size"):
            r.ignore(key, "unused: every layer is dense (num_dense_layers)")
    if dense:
        o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    else:
        r.ignore("intermediate_size", "unused: every layer is MoE (num_dense_layers 0)")
    for key in ("use_expert_bias", "routed_scaling_factor", "norm_topk_prob", "output_router_logits"):
        r.ignore(key, NO_EFFECT)
    older_tie(r, o)
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
