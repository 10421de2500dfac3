"""Inkling 2's text model: Inkling2TextConfig, modeling_inkling2. Inkling's full ('hybrid') and sliding
('hybrid_sliding') GQA layers with their relative-position logits and convs, and:

- on every attention layer, a sink logit per head projected from the layer input (sink_proj D -> heads:
  attention_sink_proj) and an output gate (gate_proj D -> heads x head width: attention_output_gate);
- on the full layers, key and value convs of per-token taps (weight_proj D -> KV heads x taps each, beside the
  static taps: kv_conv_dynamic_layers='G');
- block attention residuals (n_layers_per_attn_res_block: attn_res_block_size), the full layers' queries, keys and
  values each from its own aggregate (attn_res_qkv_layers='G');
- every FFN a MoE of routed experts only (a sigmoid router D -> experts; the experts' softcapped SwiGLU: elementwise);
- the output head over unpadded_vocab_size (the embedding table keeps vocab_size rows; no FLOPs)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType
from .inkling_text import read_attention

# Inkling2TextConfig (its attribute map: sliding_window, num_local_experts, sconv_kernel_size, intermediate_size and
# routed_scaling_factor name its fields)
DEFAULTS = {
    "vocab_size": 201024, "unpadded_vocab_size": 200058, "hidden_size": 4608, "num_hidden_layers": 48,
    "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "swa_num_attention_heads": 48,
    "swa_num_key_value_heads": 8, "swa_head_dim": 128, "sliding_window_size": 1024, "d_rel": 16, "rel_extent": 1024,
    "conv_kernel_size": 4, "moe_intermediate_size": 2304, "n_routed_experts": 384, "num_experts_per_tok": 8,
    "n_layers_per_attn_res_block": 6,
}


def read(r: Reader, d) -> dict:
    n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o = {"num_decoder_layers": n, "emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "num_query_heads": r.int("num_attention_heads", d("num_attention_heads"), minimum=1),
         "num_kv_heads": r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1),
         "head_dim": r.int("head_dim", d("head_dim"), minimum=1)}
    # Inkling2ForCausalLM's lm_head: D -> unpadded_vocab_size (the checkpoint's padded rows dropped on load)
    o["vocab_size"] = r.int("unpadded_vocab_size", d("unpadded_vocab_size"), minimum=1)
    r.ignore("vocab_size", NO_EFFECT + " (the embedding table's rows; the head projects to unpadded_vocab_size)")
    letters = read_attention(r, d, o, n)
    o["attention_sink_proj"] = o["attention_output_gate"] = True
    if "G" in letters:
        o["kv_conv_dynamic_layers"] = "G"
    o["attn_res_block_size"] = r.int("n_layers_per_attn_res_block", d("n_layers_per_attn_res_block"), minimum=1)
    if "G" in letters and n > 1:  # (layer 0's input is the embedding itself: no aggregate)
        o["attn_res_qkv_layers"] = "G"
    # every layer's FFN: Inkling2SparseMoeBlock (no shared experts, no dense layers)
    o["num_experts"] = parts.alias(r, "n_routed_experts", "num_local_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = parts.alias(r, "moe_intermediate_size", "intermediate_size", d("moe_intermediate_size"),
                                   minimum=1)
    o["mlp_activations"] = ("silu", "linear")
    r.ignore("hidden_act", NO_EFFECT + ": the experts run Inkling 2's softcapped SwiGLU whatever it names "
                                       "(elementwise)")
    for key in ("log_scaling_n_floor", "log_scaling_alpha", "qk_l2_clip_threshold", "rel_l2_clip_threshold",
                "mlp_gate_softcap", "mlp_up_softcap", "final_logit_softcapping", "scoring_func", "route_scale",
                "routed_scaling_factor", "number_of_conv_states"):
        r.ignore(key, NO_EFFECT + " (scales, clips, softcaps, the router's score function, the cache's conv-state "
                                  "count: no matmul)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=read)
