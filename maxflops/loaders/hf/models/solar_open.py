"""Solar Open: SolarOpenConfig, modeling_solar_open; GQA (head_dim its own field), every layer MoE: n_routed_experts
(alias num_local_experts) gated experts of moe_intermediate_size, top num_experts_per_tok, and one shared MLP of
n_shared_experts x moe_intermediate_size; global attention."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# SolarOpenConfig (no intermediate_size field)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 196608, "hidden_size": 4096, "num_hidden_layers": 48, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu", "moe_intermediate_size": 1280,
    "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128,
}


def _ffn(r: Reader, d, o: dict, n: int):
    """SolarOpenMoE on every decoder layer: routed experts and the shared MLP (moe_intermediate_size x
    n_shared_experts wide)."""
    o["num_experts"] = parts.alias(r, "n_routed_experts", "num_local_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("n_shared_experts", d("n_shared_experts"))
    return [True] * n, "n_routed_experts"


TYPE = HFType(
    defaults=DEFAULTS, ffn=_ffn, dense_key=None,
    no_effect={"intermediate_size": "no SolarOpenConfig field: every layer is MoE and the shared MLP is "
                                    "moe_intermediate_size x n_shared_experts wide (modeling_solar_open never sizes "
                                    "an MLP by it)",
               "first_k_dense_replace": "no SolarOpenConfig field: modeling_solar_open builds the MoE on every layer"},
)
