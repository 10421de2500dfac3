"""Jamba: JambaConfig, modeling_jamba; Mamba-1 and attention layers, gated MLPs and MoE."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import ssm
from ..house import HFType

# JambaConfig (mamba_dt_rank "auto": ceil(hidden_size / 16))
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 65536, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu", "num_experts_per_tok": 2,
    "num_experts": 16, "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8,
    "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": "auto",
}

def _read(r: Reader, d) -> dict:
    """JambaConfig: num_hidden_layers layers, layer i attention iff i % attn_layer_period == attn_layer_offset (else
    a Mamba-1 mixer, mamba_expand x hidden_size wide), each followed by MoE iff i % expert_layer_period ==
    expert_layer_offset and num_experts > 1 (a router D -> num_experts, gated experts of intermediate_size), else a
    gated MLP of intermediate_size. Its mixer's RMS norms of dt, B and C are elementwise."""
    o: dict[str, Any] = {}
    # no field of JambaConfig, and transformers 5.24's modeling_jamba never reads it (AI21's files carry it null)
    r.ignore("sliding_window", NO_EFFECT + ": modeling_jamba never reads it")
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")
    period, offset = r.int("attn_layer_period", d("attn_layer_period"), minimum=1), r.int(
        "attn_layer_offset", d("attn_layer_offset"), minimum=0)
    if offset >= period:
        raise r.fail("attn_layer_offset", f"must be below attn_layer_period={period} (JambaConfig refuses it)", offset)
    mixers = ["G" if i % period == offset else "A" for i in range(n)]
    experts = r.int("num_experts", d("num_experts"), minimum=1)
    e_period, e_offset = r.int("expert_layer_period", d("expert_layer_period"), minimum=1), r.int(
        "expert_layer_offset", d("expert_layer_offset"), minimum=0)
    if e_offset >= e_period:
        raise r.fail("expert_layer_offset", f"must be below expert_layer_period={e_period} (JambaConfig refuses it)",
                     e_offset)
    ffns = ["E" if experts > 1 and i % e_period == e_offset else "F" for i in range(n)]
    o["attention_layer_pattern"] = fit_pattern(mixers, r, "attn_layer_period")
    o["ffn_layer_pattern"] = fit_pattern(ffns, r, "expert_layer_period")
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    if "E" in ffns:
        o["num_experts"] = experts
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = o["mlp_dim"]
    else:
        r.ignore("num_experts_per_tok", "unused: no MoE layers")
    if "G" in mixers:
        heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
        kv = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1, none_ok=True)
        o["num_kv_heads"] = heads if kv is None else kv
        o["head_dim"] = o["emb_dim"] // heads
    else:
        for k in ("num_attention_heads", "num_key_value_heads"):
            r.ignore(k, "unused: no attention layers")
    if "A" in mixers:
        o["mamba1_inner_dim"] = r.int("mamba_expand", d("mamba_expand"), minimum=1) * o["emb_dim"]
        o["mamba1_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
        o["mamba1_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
        o["mamba1_dt_rank"] = ssm.dt_rank(r, "mamba_dt_rank", d, o["emb_dim"])
    else:
        for k in ("mamba_expand", "mamba_d_state", "mamba_d_conv", "mamba_dt_rank"):
            r.ignore(k, "unused: no Mamba layers")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
