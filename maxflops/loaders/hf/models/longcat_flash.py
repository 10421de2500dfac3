"""LongCat-Flash: LongcatFlashConfig, modeling_longcat_flash; two MLA + MLP sublayers per layer and a shortcut MoE with
zero-computation experts."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# LongcatFlashConfig (saved names: num_layers, ffn_hidden_size, n_routed_experts, moe_topk)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 131072, "hidden_size": 6144, "num_layers": 28, "num_attention_heads": 64, "hidden_act": "silu",
    "ffn_hidden_size": 12288, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "moe_topk": 12, "n_routed_experts": 512, "zero_expert_num": 256,
    "expert_ffn_hidden_size": 2048,
}

# its q is sized by qk_head_dim; a present head_dim is the rotary width
_MLA = parts.mla(keeps_rotary_head_dim=True, reads_qk_head_dim=True)


def _read(r: Reader, d) -> dict:
    """LongcatFlashConfig, as modeling_longcat_flash builds the model: each of num_layers layers holds two sublayers
    of MLA and a gated MLP (ffn_hidden_size) and one MoE on the first sublayer's normed input (the shortcut): a
    softmax router over n_routed_experts + zero_expert_num experts, top moe_topk, the zero experts an identity (no
    matmul). In maxflops' terms: 2 x num_layers layers of MLA ('G'), the first of each pair an MoE layer whose shared
    expert is that sublayer's MLP, the second a dense layer (ffn_layer_pattern 'EF'); zero_experts, with the share
    of slots they take a stated knob (zero_expert_share, not in the file)."""
    o: dict[str, Any] = {}
    layers = r.int("num_layers", d("num_layers"), minimum=1)
    if r.has("num_hidden_layers"):
        if r.int("num_hidden_layers") != 2 * layers:
            raise r.fail("num_hidden_layers", f"is 2 x num_layers = {2 * layers} in LongcatFlashConfig")
        r.ignore("num_hidden_layers", "superseded: 2 x num_layers")
    o["num_decoder_layers"] = 2 * layers
    o["attention_layer_pattern"], o["ffn_layer_pattern"] = "G", "EF"
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o["num_kv_heads"] = heads
    r.ignore("num_key_value_heads", "unused: MLA (every head's keys and values come from the latent)")
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")
    _MLA(r, d, o)
    width = o["mlp_dim"] = parts.alias(r, "ffn_hidden_size", "intermediate_size", d("ffn_hidden_size"), minimum=1)
    o["num_experts"] = parts.alias(r, "n_routed_experts", "num_local_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = parts.alias(r, "moe_topk", "num_experts_per_tok", d("moe_topk"), minimum=1)
    o["moe_mlp_dim"] = r.int("expert_ffn_hidden_size", d("expert_ffn_hidden_size"), minimum=1)
    zero = r.int("zero_expert_num", d("zero_expert_num"), minimum=0, none_ok=True) or 0
    if zero:
        o["zero_experts"] = zero
    if r.has("zero_expert_type"):
        if r.str("zero_expert_type") != "identity":
            raise r.fail("zero_expert_type", "only identity zero experts are modelled")
        r.ignore("zero_expert_type", NO_EFFECT + " (identity)")
    o["shared_experts"], o["shared_expert_mlp_dim"] = 1, width  # the first sublayer's MLP beside the MoE
    for key in ("router_bias", "mla_scale_q_lora", "mla_scale_kv_lora"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (a bias or a scale)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
