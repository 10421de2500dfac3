"""Beam: BeamConfig, modeling_beam; GQA with q/k norms and a sigmoid output gate (gate_proj, hidden_size -> heads *
head_dim), sliding-window layers but every 6th and the last (absent layer_types), a dense FFN on the first three
layers and num_experts experts of moe_intermediate_size elsewhere (absent mlp_layer_types), no shared expert."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# BeamConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 20480, "num_hidden_layers": 52,
    "num_attention_heads": 48, "num_key_value_heads": 8, "hidden_act": "silu", "sliding_window": 512,
    "moe_intermediate_size": 2560, "num_experts_per_tok": 8, "num_experts": 256, "head_dim": 128,
}


def _moe(r: Reader, d, o: dict, n: int):
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    if parts.given(r, "mlp_layer_types"):
        return parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
    r.defaults[r.name("mlp_layer_types")] = "the first min(3, num_hidden_layers) dense (BeamConfig)"
    return [l >= 3 for l in range(n)], "num_hidden_layers"


def _gate(r: Reader, d, o: dict, pattern: str) -> None:
    """BeamAttention's gate_proj (hidden_size -> heads * head_dim, plus a per-head bias, sigmoid, times the attention
    output): the FLOPs of a q projection twice as wide (the schema's attention_output_gate)."""
    o["attention_output_gate"] = True


TYPE = HFType(defaults=DEFAULTS, ffn=_moe,
              layers=parts.typed_layers("GL", lambda i, n: "G" if (i + 1) % 6 == 0 or i == n - 1 else "L"),
              extras=(_gate,))
