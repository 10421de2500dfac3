"""Sarvam-30B: SarvamMoEConfig, built as modeling_glm4_moe (Glm4MoeForCausalLM); GQA (head_dim its own field), a
dense gated MLP on the first first_k_dense_replace layers, then DeepSeek-style MoE (n_routed_experts of
moe_intermediate_size, one shared MLP of n_shared_experts x moe_intermediate_size); MTP modules
(num_nextn_predict_layers; transformers builds none)."""

from __future__ import annotations

from ....reader import Reader
from .. import parts
from ..house import HFType

# SarvamMoEConfig (num_nextn_predict_layers: its field num_mtp_layers, saved under this name)
DEFAULTS = {
    "vocab_size": 262144, "hidden_size": 4096, "intermediate_size": 8192, "num_hidden_layers": 19,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 64, "hidden_act": "silu",
    "moe_intermediate_size": 1024, "num_experts_per_tok": 6, "n_shared_experts": 1, "n_routed_experts": 128,
    "first_k_dense_replace": 1, "num_nextn_predict_layers": 0,
}


def _aliased(r: Reader, d, saved: str, aliases: tuple, minimum: int = 0) -> int:
    """A field saved as ``saved`` or given under the class's attribute_map aliases (the original checkpoints'
    names); every name present must agree."""
    present = [a for a in aliases if r.has(a)]
    key = saved if r.has(saved) or not present else present[0]
    value = r.int(key, d(saved) if key == saved else None, minimum=minimum)
    for a in (saved, *aliases):
        if a != key and r.has(a):
            if r.int(a, record=False) != value:
                raise r.fail(a, f"disagrees with {key}={value} (the config class reads both as {saved})")
            r.ignore(a, f"superseded: same as {key}")
    return value


def _ffn(r: Reader, d, o: dict, n: int):
    """Glm4MoeDecoderLayer: MoE iff layer_idx >= first_k_dense_replace (moe_layer_freq is not read)."""
    o["num_experts"] = _aliased(r, d, "n_routed_experts", ("num_experts", "num_local_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = _aliased(r, d, "n_shared_experts", ("num_shared_experts",))
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    return [l >= k for l in range(n)], "first_k_dense_replace"


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn, extras=(parts.mtp_layers,),
    no_effect={"use_qkv_bias": "the original checkpoint's name of attention_bias (biases: no matmul)",
               "moe_layer_freq": "not read by modeling_glm4_moe (MoE iff layer >= first_k_dense_replace)"},
)
