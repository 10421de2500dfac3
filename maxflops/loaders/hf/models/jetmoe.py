"""JetMoE: JetMoeConfig, modeling_jetmoe; every layer a mixture of attention heads (JetMoeMoA: a router D ->
num_local_experts, each token's top num_experts_per_tok experts projecting num_key_value_heads query heads of
kv_channels each in and their output back out, keys and values one shared projection: the schema's GQA of
num_key_value_heads x num_experts_per_tok query heads with attention_router_experts) and an MoE FFN (a router D ->
num_local_experts, top num_experts_per_tok gated experts of intermediate_size, no shared expert)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from ..house import HFType

# JetMoeConfig (attribute_map: head_dim -> kv_channels; num_attention_heads: kv heads x top-k, a post-init rule)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 32000, "hidden_size": 2048, "num_hidden_layers": 12, "num_key_value_heads": 16,
    "head_dim": 128, "intermediate_size": 5632, "activation_function": "silu", "num_local_experts": 8,
    "num_experts_per_tok": 2,
}


def _read(r: Reader, d) -> dict:
    o = {"num_decoder_layers": r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1),
         "emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1)}
    kv = o["num_kv_heads"] = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1)
    o["head_dim"] = r.int("head_dim", d("head_dim"), minimum=1)  # (the file's kv_channels)
    E = r.int("num_local_experts", d("num_local_experts"), minimum=1)
    k = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    if k > E:
        raise r.fail("num_experts_per_tok", f"exceeds num_local_experts={E} (JetMoeConfig refuses it)")
    o["num_query_heads"] = kv * k  # JetMoeConfig.__post_init__: num_attention_heads = kv heads x top-k
    if r.has("num_attention_heads"):
        r.raw("num_attention_heads", none_ok=True, record=False)
        r.ignore("num_attention_heads", "not read: JetMoeConfig sets it to num_key_value_heads x num_experts_per_tok")
    o["attention_router_experts"] = E
    o["num_experts"], o["num_experts_per_tok"] = E, k
    o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    o["mlp_activations"] = (r.activation("activation_function", d("activation_function")), "linear")
    o["attention_layer_pattern"] = "G"
    r.ignore("hidden_act", "not read by JetMoeConfig (activation_function is what JetMoE uses)")
    r.ignore("aux_loss_coef", NO_EFFECT + " (the routers' auxiliary loss weight)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read, attribute_map={"head_dim": "kv_channels"})
