"""NemotronH (Nemotron-H, Nemotron Nano 2, Nemotron 3): NemotronHConfig, modeling_nemotron_h; one block per layer:
Mamba-2, attention, a plain MLP or MoE with a shared MLP; MTP modules."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts, ssm
from ..house import HFType

# NemotronHConfig (no published model: every key of a real file is given)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 131072, "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 21504, "mlp_hidden_act": "relu2",
    "ssm_state_size": 128, "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "conv_kernel": 4,
    "chunk_size": 128, "mamba_ssm_cache_dtype": "float32", "n_routed_experts": 8, "num_experts_per_tok": 2,
    "moe_intermediate_size": 7688, "moe_shared_expert_intermediate_size": 7688, "num_nextn_predict_layers": 0,
}

def _read(r: Reader, d) -> dict:
    """NemotronHConfig: one block per entry of layers_block_type (else the legacy hybrid_override_pattern, else the
    class's default list), each a norm, one mixer and the residual: a Mamba-2 mixer (mamba_num_heads x
    mamba_head_dim wide; expand is not read), GQA attention, a plain MLP (up, mlp_hidden_act, down), or MoE (a
    sigmoid router D -> n_routed_experts, plain experts of moe_intermediate_size, one shared MLP of
    moe_shared_expert_intermediate_size)."""
    o: dict[str, Any] = {}
    if parts.given(r, "layers_block_type"):
        types = r.list("layers_block_type", str)
        key = "layers_block_type"
        if r.has("hybrid_override_pattern"):
            r.ignore("hybrid_override_pattern", "superseded by layers_block_type")
    elif r.has("hybrid_override_pattern"):
        pattern = r.str("hybrid_override_pattern")
        bad = [ch for ch in pattern if ch not in ssm.NEMOTRON_LEGACY]
        if bad or not pattern:
            raise r.fail("hybrid_override_pattern", "expected letters M (Mamba-2), * (attention), - (MLP), E (MoE)",
                         pattern)
        types = [ssm.NEMOTRON_LEGACY[ch] for ch in pattern]
        key = "hybrid_override_pattern"
    else:  # NemotronHConfig.__post_init__'s list when neither is given
        types = list(ssm.NEMOTRON_DEFAULT_BLOCKS)
        r.defaults["layers_block_type"] = types
        key = "layers_block_type"
    types = [ssm.NEMOTRON_RENAMED.get(t, t) for t in types]
    bad = [t for t in types if t not in ssm.NEMOTRON_BLOCKS]
    if bad or not types:
        raise r.fail(key, f"block type {bad[0] if bad else None!r} is not one of {', '.join(ssm.NEMOTRON_BLOCKS)}")
    if r.has("num_hidden_layers"):  # NemotronHConfig derives the layer count from the list, whatever this says
        r.ignore("num_hidden_layers", f"superseded by {key} ({len(types)} layers)")
    o["num_decoder_layers"] = len(types)
    o["attention_layer_pattern"] = fit_pattern([ssm.NEMOTRON_BLOCKS[t][0] for t in types], r, key)
    o["ffn_layer_pattern"] = fit_pattern([ssm.NEMOTRON_BLOCKS[t][1] for t in types], r, key)
    mtp = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"), minimum=0)
    if mtp:  # each MTP module runs the blocks of mtp_layers_block_type (transformers builds none; Megatron does)
        if parts.given(r, "mtp_layers_block_type"):  # (__post_init__ renames the legacy 'mamba' and 'attention')
            mtp_types = [ssm.NEMOTRON_RENAMED.get(t, t) for t in r.list("mtp_layers_block_type", str)]
            if r.has("mtp_hybrid_override_pattern"):
                r.ignore("mtp_hybrid_override_pattern", "superseded by mtp_layers_block_type")
        elif r.has("mtp_hybrid_override_pattern"):  # the legacy string, as __post_init__ converts it
            pattern = r.str("mtp_hybrid_override_pattern")
            if not pattern or any(ch not in ssm.NEMOTRON_LEGACY for ch in pattern):
                raise r.fail("mtp_hybrid_override_pattern", "expected letters M (Mamba-2), * (attention), - (MLP), "
                                                            "E (MoE)", pattern)
            mtp_types = [ssm.NEMOTRON_LEGACY[ch] for ch in pattern]
        else:  # NemotronHConfig.__post_init__'s list when neither is given
            mtp_types = ["full_attention", "moe"]
            r.defaults["mtp_layers_block_type"] = mtp_types
        bad = [t for t in mtp_types if t not in ssm.NEMOTRON_BLOCKS]
        if bad or not mtp_types:
            raise r.fail("mtp_layers_block_type", f"block type {bad[0] if bad else None!r} is not one of "
                                                  f"{', '.join(ssm.NEMOTRON_BLOCKS)}", mtp_types)
        o["mtp_num_layers"] = mtp
        o["mtp_layer_pattern"] = "".join(ssm.NEMOTRON_BLOCKS[t][0] for t in mtp_types)
        o["mtp_ffn_layer_pattern"] = "".join(ssm.NEMOTRON_BLOCKS[t][1] for t in mtp_types)
        types = types + mtp_types  # (the keys below are read for the MTP blocks too)
    else:
        for k in ("mtp_layers_block_type", "mtp_hybrid_override_pattern"):
            r.ignore(k, "unused: no MTP layers")
    mixers = [ssm.NEMOTRON_BLOCKS[t][0] for t in types]
    ffns = [ssm.NEMOTRON_BLOCKS[t][1] for t in types]
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    act = r.activation("mlp_hidden_act", d("mlp_hidden_act"))
    o["mlp_activations"] = (act,)  # plain MLPs and experts: up, act, down (no gate)

    if "G" in mixers:
        o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
        o["num_kv_heads"] = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1)
        o["head_dim"] = r.int("head_dim", d("head_dim"), minimum=1)
        if r.has("attention_head_dim"):  # older files' name; transformers reads head_dim (default 128) instead
            if r.int("attention_head_dim", minimum=1, record=False) != o["head_dim"]:
                raise r.fail("attention_head_dim", f"differs from head_dim={o['head_dim']}, which transformers' "
                                                   "NemotronH attention uses", r.data["attention_head_dim"])
            r.ignore("attention_head_dim", f"superseded: head_dim ({o['head_dim']}) is what transformers reads")
        # a field of NemotronHConfig that transformers 5.24's modeling_nemotron_h never reads: attention is global
        r.ignore("sliding_window", NO_EFFECT + ": modeling_nemotron_h never reads it (its attention is global)")
    else:
        for k in ("num_attention_heads", "num_key_value_heads", "head_dim", "attention_head_dim", "sliding_window"):
            r.ignore(k, "unused: no attention layers")
    if "M" in mixers:
        ssm.mamba2_widths(r, d, o, "mamba_num_heads", "mamba_head_dim", "ssm_state_size", ssm.NEMOTRON_ALIASES)
        for k in ("expand", "mamba_expand"):  # (mamba_expand: the legacy name __post_init__ reads as expand)
            r.ignore(k, "unused: NemotronH's Mamba width is mamba_num_heads x mamba_head_dim")
        for k in ("mamba_dt_min", "mamba_dt_max", "mamba_dt_limit", "mamba_dt_init_floor"):  # legacy time_step_*
            r.ignore(k, NO_EFFECT)
        ssm.state_dtype(r, "mamba_ssm_cache_dtype", o, d("mamba_ssm_cache_dtype"))
    else:
        for k in ("mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups", "conv_kernel", "chunk_size",
                  "expand", "mamba_ssm_cache_dtype"):
            r.ignore(k, "unused: no Mamba layers")
    if "F" in ffns:
        o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    else:
        r.ignore("intermediate_size", "unused: no MLP layers")
    if "E" in ffns:
        o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=2)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        o["shared_experts"] = 1
        o["shared_expert_mlp_dim"] = r.int("moe_shared_expert_intermediate_size",
                                           d("moe_shared_expert_intermediate_size"), minimum=1)
        r.ignore("n_shared_experts", "unused: NemotronHMoE always has one shared MLP "
                                     "(moe_shared_expert_intermediate_size wide)")
        # NemotronHMoE: with moe_latent_size, fc1_latent_proj D -> latent before the routed experts (which take and
        # give latent vectors) and fc2_latent_proj back after them; null: none (nn.Identity)
        latent = r.int("moe_latent_size", None, minimum=1, none_ok=True)
        if latent is not None:
            o["moe_latent_size"] = latent
    else:
        for k in ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                  "moe_shared_expert_intermediate_size", "n_shared_experts", "moe_latent_size"):
            r.ignore(k, "unused: no MoE layers")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
