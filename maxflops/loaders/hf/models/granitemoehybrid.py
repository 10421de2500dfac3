"""Granite 4.0 hybrid: GraniteMoeHybridConfig, modeling_granitemoehybrid; Mamba-2 or attention, then MoE with a shared
gated MLP."""

from __future__ import annotations

from typing import Any

from ...reader import Reader
from .. import parts, ssm
from ..house import HFType

# GraniteMoeHybridConfig (num_key_value_heads: post-init rule)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "num_local_experts": 8, "num_experts_per_tok": 2,
    "shared_intermediate_size": 1024, "mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1,
    "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
}

def _read(r: Reader, d) -> dict:
    """GraniteMoeHybridConfig: num_hidden_layers layers, each a Mamba-2 mixer or attention (layer_types; absent: every
    layer Mamba) and then MoE (a router D -> num_local_experts, gated experts of intermediate_size, top
    num_experts_per_tok) plus one shared gated MLP of shared_intermediate_size; with num_local_experts 0 the shared
    MLP alone."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    key = "layers_block_type" if r.has("layers_block_type") and not r.has("layer_types") else "layer_types"
    if parts.given(r, key):  # (layers_block_type: the attribute-map alias of layer_types)
        types = r.list(key, str)
        if len(types) != n:
            raise r.fail(key, f"has {len(types)} entries for num_hidden_layers={n}")
        bad = [t for t in types if t not in ssm.TYPE_LETTERS]
        if bad:
            raise r.fail(key, f"layer type {bad[0]!r} is not one of {', '.join(ssm.TYPE_LETTERS)}")
        mixers = [ssm.TYPE_LETTERS[t] for t in types]
    else:  # GraniteMoeHybridConfig.__post_init__: every layer Mamba
        mixers = ["M"] * n
    ssm.hybrid_common(r, d, o, mixers)
    experts = r.int("num_local_experts", d("num_local_experts"), minimum=0)
    shared = r.int("shared_intermediate_size", d("shared_intermediate_size"), minimum=1)
    if experts:
        o["num_experts"] = experts
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
        if experts == 1:  # one routed expert is still a routed layer (its router runs), which the schema counts
            raise r.fail("num_local_experts", "one routed expert is not modelled (maxflops' MoE needs 2 or more)",
                         experts)
    else:
        o["mlp_dim"] = shared
        for k in ("num_experts_per_tok", "intermediate_size"):
            r.ignore(k, "unused: no experts (num_local_experts 0; the shared MLP alone)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
