"""Flint: FlintConfig, modeling_flint; GQA (q/k norms, per-head attention sinks), sliding-window and full layers
(absent layer_types: full on layers 0, 1, every 4th from 1 and the last); a MoE of num_experts experts of
moe_intermediate_size (sigmoid top num_experts_per_tok) plus an ungated shared expert of
shared_expert_intermediate_size, on Qwen's layer rule with mlp_only_layers [0, 1] when absent or null."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# FlintConfig (layer_types, mlp_only_layers: derived by __post_init__)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 150144, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 49,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "hidden_act": "silu",
    "sliding_window": 513, "decoder_sparse_step": 1, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 1024, "num_experts_per_tok": 6, "num_experts": 256,
}

_MOE_KEYS = ("num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size")


def _ffn(r: Reader, d, o: dict, n: int):
    """FlintDecoderLayer: MoE iff layer not in mlp_only_layers, num_experts > 0 and (layer + 1) %
    decoder_sparse_step == 0."""
    experts = r.int("num_experts", d("num_experts"))
    only = r.list("mlp_only_layers", int, [0, 1], none_ok=True)
    only = [0, 1] if only is None else only
    step = r.int("decoder_sparse_step", d("decoder_sparse_step"), minimum=1)
    is_moe = [experts > 0 and l not in set(only) and (l + 1) % step == 0 for l in range(n)]
    key = "mlp_only_layers" if only else "decoder_sparse_step"
    if not any(is_moe):
        for k in _MOE_KEYS:
            r.ignore(k, "unused: no MoE layer")
        return is_moe, key
    if experts == 1:
        raise r.fail("num_experts", "a MoE of one routed expert (and a shared one): the schema reads num_experts=1 as "
                                    "no MoE")
    o["num_experts"] = experts
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    moe = o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    shared = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"))
    if shared:  # added in full, no gate
        if shared % moe:
            o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
        else:
            o["shared_experts"] = parts.shared_count(r, "shared_expert_intermediate_size", shared, moe)
    return is_moe, key


TYPE = HFType(defaults=DEFAULTS, ffn=_ffn,
              layers=parts.typed_layers("GL", lambda i, n: "G" if i < 2 or i % 4 == 1 or i == n - 1 else "L"))
