"""Hugging Face config.json -> schema overrides for the state-space families (Mamba-2, and hybrids of it with
attention, MLP and MoE layers), as transformers 5.24 builds their models. Called by ``maxflops.loaders.hf``, which
owns the file handling, the defaults tables and the loader contract; this module owns what each model type's keys
mean.

    mamba2       every layer one Mamba-2 mixer (no FFN)
    nemotron_h   one block per layer: Mamba-2 ('linear_attention' / M), attention ('full_attention' / *),
                 a plain MLP ('mlp' / -) or MoE ('moe' / E), given by layers_block_type or hybrid_override_pattern
    bamba        every layer a Mamba-2 mixer or attention (attn_layer_indices) and a gated MLP
    granitemoehybrid
                 every layer a Mamba-2 mixer or attention (layer_types) and MoE with one shared gated MLP (or the
                 shared MLP alone with num_local_experts 0)
    mamba, falcon_mamba
                 every layer one Mamba-1 mixer (no FFN)
    jamba        every layer a Mamba-1 mixer or attention (attn_layer_period / offset) and a gated MLP or MoE
                 (expert_layer_period / offset)
    falcon_h1    every layer attention and a Mamba-2 mixer side by side (parallel_layer_pattern), then a gated MLP
    zamba2       Mamba-2 layers, and hybrid layers that first run a shared transformer block ('Z') reused at several
                 depths with per-depth adapters
"""

from __future__ import annotations

import math
from typing import Any

from ..reader import NO_EFFECT, Reader, fit_pattern

# NemotronHConfig's block names and the legacy pattern letters -> (mixer letter, FFN letter) of maxflops
_NEMOTRON_BLOCKS = {"linear_attention": ("M", "-"), "full_attention": ("G", "-"), "mlp": ("-", "F"),
                    "moe": ("-", "E")}
_NEMOTRON_LEGACY = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
_NEMOTRON_DEFAULT_BLOCKS = ("linear_attention", "moe", "full_attention", "mlp")
_NEMOTRON_RENAMED = {"mamba": "linear_attention", "attention": "full_attention"}  # legacy block names, as transformers
#                                                                                  renames them (remap_legacy_layer_types)
# NemotronHConfig.__post_init__ reads these legacy names in place of its fields when a file has them
_NEMOTRON_ALIASES = {"n_groups": "mamba_n_groups", "conv_kernel": "mamba_d_conv", "chunk_size": "mamba_chunk_size"}
_CACHE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}

# keys of these model types with no FLOPs effect (beyond the shared list in maxflops.loaders.hf)
NO_EFFECT_KEYS = frozenset("""
    use_conv_bias mamba_proj_bias use_bias mamba_hidden_act time_step_min time_step_max time_step_limit
    time_step_floor time_step_rank residual_in_fp32 rescale_prenorm_residual layer_norm_epsilon use_mamba_kernels
    num_logits_to_keep use_long_context use_mem_eff_path moe_shared_expert_overlap norm_eps mamba_conv_bias z_loss_coefficient embedding_multiplier
    logits_scaling residual_multiplier attention_multiplier position_embedding_type normalization_function
    time_step_scale time_step_init_scheme use_mambapy use_associative_scan mixer_rms_eps mamba_proj_bias
    use_falcon_mambapy mamba_norm_before_gate mamba_rms_norm projectors_bias lm_head_multiplier mlp_multipliers
    key_multiplier attention_out_multiplier attention_in_multiplier ssm_multipliers ssm_in_multiplier
    ssm_out_multiplier
""".split())
_TYPE_LETTERS = {"linear_attention": "M", "mamba": "M", "full_attention": "G", "attention": "G"}  # (legacy names)


def hybrid_patterns(hybrid_override_pattern: str) -> dict:
    """NemotronH's layer string (M Mamba-2, * attention, - MLP, E MoE; one block per letter) as maxflops' two
    patterns: {"attention_layer_pattern": ..., "ffn_layer_pattern": ...}, one letter per layer each."""
    bad = [ch for ch in hybrid_override_pattern if ch not in _NEMOTRON_LEGACY]
    if bad or not hybrid_override_pattern:
        raise ValueError(f"hybrid_override_pattern {hybrid_override_pattern!r}: expected letters M (Mamba-2), "
                         "* (attention), - (MLP), E (MoE)")
    blocks = [_NEMOTRON_BLOCKS[_NEMOTRON_LEGACY[ch]] for ch in hybrid_override_pattern]
    return {"attention_layer_pattern": "".join(b[0] for b in blocks),
            "ffn_layer_pattern": "".join(b[1] for b in blocks)}


def _mamba(r: Reader, d, o: dict, heads_key: str, head_dim_key: str, state_key: str, aliases=None) -> None:
    """The Mamba-2 mixer's widths. ``aliases``: {key: legacy name} the config class reads in its key's place when a
    file has it (NemotronH's mamba_n_groups, mamba_d_conv, mamba_chunk_size)."""
    def key(name):
        old = (aliases or {}).get(name)
        if old and r.has(old):
            if r.has(name):
                r.ignore(name, f"superseded by {old} (the config class reads that one)")
            return old
        return name

    o["mamba_num_heads"] = r.int(heads_key, d(heads_key), minimum=1)
    o["mamba_head_dim"] = r.int(head_dim_key, d(head_dim_key), minimum=1)
    o["mamba_state_dim"] = r.int(state_key, d(state_key), minimum=1)
    groups_key = key("n_groups")
    o["mamba_n_groups"] = r.int(groups_key, d("n_groups"), minimum=1)
    o["mamba_conv_kernel"] = r.int(key("conv_kernel"), d("conv_kernel"), minimum=1)
    o["mamba_chunk_size"] = r.int(key("chunk_size"), d("chunk_size"), minimum=1)
    if o["mamba_num_heads"] % o["mamba_n_groups"]:
        raise r.fail(groups_key, f"does not divide the {o['mamba_num_heads']} Mamba heads", o["mamba_n_groups"])


def mamba2(r: Reader, d) -> dict:
    """Mamba2Config: num_hidden_layers Mamba-2 blocks (a norm, the mixer, the residual), no FFN. Its mixer's width
    is hidden_size x expand, which the config class requires to equal num_heads x head_dim."""
    o: dict[str, Any] = {"attention_layer_pattern": "M", "ffn_layer_pattern": "-"}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    _mamba(r, d, o, "num_heads", "head_dim", "state_size")
    expand = r.int("expand", d("expand"), minimum=1)
    if o["emb_dim"] * expand != o["mamba_num_heads"] * o["mamba_head_dim"]:
        raise r.fail("expand", f"hidden_size x expand = {o['emb_dim'] * expand} must equal num_heads x head_dim = "
                               f"{o['mamba_num_heads'] * o['mamba_head_dim']} (Mamba2Config refuses it)", expand)
    r.ignore("hidden_act", NO_EFFECT + ": the mixer's conv activation")
    return o


def nemotron_h(r: Reader, d, given) -> dict:
    """NemotronHConfig: one block per entry of layers_block_type (else the legacy hybrid_override_pattern, else the
    class's default list), each a norm, one mixer and the residual: a Mamba-2 mixer (mamba_num_heads x
    mamba_head_dim wide; expand is not read), GQA attention, a plain MLP (up, mlp_hidden_act, down), or MoE (a
    sigmoid router D -> n_routed_experts, plain experts of moe_intermediate_size, one shared MLP of
    moe_shared_expert_intermediate_size)."""
    o: dict[str, Any] = {}
    if given("layers_block_type"):
        types = r.list("layers_block_type", str)
        key = "layers_block_type"
        if r.has("hybrid_override_pattern"):
            r.ignore("hybrid_override_pattern", "superseded by layers_block_type")
    elif r.has("hybrid_override_pattern"):
        pattern = r.str("hybrid_override_pattern")
        bad = [ch for ch in pattern if ch not in _NEMOTRON_LEGACY]
        if bad or not pattern:
            raise r.fail("hybrid_override_pattern", "expected letters M (Mamba-2), * (attention), - (MLP), E (MoE)",
                         pattern)
        types = [_NEMOTRON_LEGACY[ch] for ch in pattern]
        key = "hybrid_override_pattern"
    else:  # NemotronHConfig.__post_init__'s list when neither is given
        types = list(_NEMOTRON_DEFAULT_BLOCKS)
        r.defaults["layers_block_type"] = types
        key = "layers_block_type"
    types = [_NEMOTRON_RENAMED.get(t, t) for t in types]
    bad = [t for t in types if t not in _NEMOTRON_BLOCKS]
    if bad or not types:
        raise r.fail(key, f"block type {bad[0] if bad else None!r} is not one of {', '.join(_NEMOTRON_BLOCKS)}")
    if r.has("num_hidden_layers"):  # NemotronHConfig derives the layer count from the list, whatever this says
        r.ignore("num_hidden_layers", f"superseded by {key} ({len(types)} layers)")
    o["num_decoder_layers"] = len(types)
    o["attention_layer_pattern"] = fit_pattern([_NEMOTRON_BLOCKS[t][0] for t in types], r, key)
    o["ffn_layer_pattern"] = fit_pattern([_NEMOTRON_BLOCKS[t][1] for t in types], r, key)
    mtp = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"), minimum=0)
    if mtp:  # each MTP module runs the blocks of mtp_layers_block_type (transformers builds none; Megatron does)
        if given("mtp_layers_block_type"):  # (__post_init__ renames the legacy 'mamba' and 'attention')
            mtp_types = [_NEMOTRON_RENAMED.get(t, t) for t in r.list("mtp_layers_block_type", str)]
            if r.has("mtp_hybrid_override_pattern"):
                r.ignore("mtp_hybrid_override_pattern", "superseded by mtp_layers_block_type")
        elif r.has("mtp_hybrid_override_pattern"):  # the legacy string, as __post_init__ converts it
            pattern = r.str("mtp_hybrid_override_pattern")
            if not pattern or any(ch not in _NEMOTRON_LEGACY for ch in pattern):
                raise r.fail("mtp_hybrid_override_pattern", "expected letters M (Mamba-2), * (attention), - (MLP), "
                                                            "E (MoE)", pattern)
            mtp_types = [_NEMOTRON_LEGACY[ch] for ch in pattern]
        else:  # NemotronHConfig.__post_init__'s list when neither is given
            mtp_types = ["full_attention", "moe"]
            r.defaults["mtp_layers_block_type"] = mtp_types
        bad = [t for t in mtp_types if t not in _NEMOTRON_BLOCKS]
        if bad or not mtp_types:
            raise r.fail("mtp_layers_block_type", f"block type {bad[0] if bad else None!r} is not one of "
                                                  f"{', '.join(_NEMOTRON_BLOCKS)}", mtp_types)
        o["mtp_num_layers"] = mtp
        o["mtp_layer_pattern"] = "".join(_NEMOTRON_BLOCKS[t][0] for t in mtp_types)
        o["mtp_ffn_layer_pattern"] = "".join(_NEMOTRON_BLOCKS[t][1] for t in mtp_types)
        types = types + mtp_types  # (the keys below are read for the MTP blocks too)
    else:
        for k in ("mtp_layers_block_type", "mtp_hybrid_override_pattern"):
            r.ignore(k, "unused: no MTP layers")
    mixers = [_NEMOTRON_BLOCKS[t][0] for t in types]
    ffns = [_NEMOTRON_BLOCKS[t][1] for t in types]
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
        _mamba(r, d, o, "mamba_num_heads", "mamba_head_dim", "ssm_state_size", _NEMOTRON_ALIASES)
        for k in ("expand", "mamba_expand"):  # (mamba_expand: the legacy name __post_init__ reads as expand)
            r.ignore(k, "unused: NemotronH's Mamba width is mamba_num_heads x mamba_head_dim")
        for k in ("mamba_dt_min", "mamba_dt_max", "mamba_dt_limit", "mamba_dt_init_floor"):  # legacy time_step_*
            r.ignore(k, NO_EFFECT)
        dtype = r.str("mamba_ssm_cache_dtype", d("mamba_ssm_cache_dtype"))
        if dtype not in _CACHE_BYTES:
            raise r.fail("mamba_ssm_cache_dtype", f"expected one of {', '.join(_CACHE_BYTES)}", dtype)
        o["state_bytes"] = _CACHE_BYTES[dtype]
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
        if given("moe_latent_size"):
            raise r.fail("moe_latent_size", "not modelled: experts in a latent space (its D -> latent and back "
                                            "projections)")
        r.ignore("moe_latent_size", NO_EFFECT + " (null)")
    else:
        for k in ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                  "moe_shared_expert_intermediate_size", "n_shared_experts", "moe_latent_size"):
            r.ignore(k, "unused: no MoE layers")
    return o


def _hybrid_common(r: Reader, d, o: dict, mixers: list) -> None:
    """The keys Bamba and GraniteMoeHybrid share: widths, GQA attention (head_dim = hidden_size // heads), and the
    Mamba-2 mixer with mamba_* names (its width mamba_expand x hidden_size = mamba_n_heads x mamba_d_head)."""
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")  # gated: act(gate) * up
    if "G" in mixers:
        heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
        kv = r.int("num_key_value_heads", heads, minimum=1, none_ok=True)
        o["num_kv_heads"] = heads if kv is None else kv
        if o["emb_dim"] % heads:
            raise r.fail("num_attention_heads", f"does not divide hidden_size={o['emb_dim']} (the head width)", heads)
        o["head_dim"] = o["emb_dim"] // heads
    else:
        for k in ("num_attention_heads", "num_key_value_heads"):
            r.ignore(k, "unused: no attention layers")
    if "M" in mixers:
        heads = r.int("mamba_n_heads", d("mamba_n_heads"), minimum=1)
        expand = r.int("mamba_expand", d("mamba_expand"), minimum=1)
        width = expand * o["emb_dim"]
        head_dim = r.raw("mamba_d_head", d("mamba_d_head"))
        if head_dim == "auto":
            head_dim = width // heads
        elif isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim < 1:
            raise r.fail("mamba_d_head", "expected a positive integer or 'auto'", head_dim)
        if heads * head_dim != width:
            raise r.fail("mamba_d_head", f"mamba_n_heads x mamba_d_head = {heads * head_dim} must equal mamba_expand x "
                                         f"hidden_size = {width} (the config class refuses it)", head_dim)
        o["mamba_num_heads"], o["mamba_head_dim"] = heads, head_dim
        o["mamba_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
        o["mamba_n_groups"] = r.int("mamba_n_groups", d("mamba_n_groups"), minimum=1)
        o["mamba_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
        o["mamba_chunk_size"] = r.int("mamba_chunk_size", d("mamba_chunk_size"), minimum=1)
        if heads % o["mamba_n_groups"]:
            raise r.fail("mamba_n_groups", f"does not divide mamba_n_heads={heads}", o["mamba_n_groups"])
    else:
        for k in ("mamba_n_heads", "mamba_expand", "mamba_d_head", "mamba_d_state", "mamba_n_groups", "mamba_d_conv",
                  "mamba_chunk_size"):
            r.ignore(k, "unused: no Mamba layers")
    o["attention_layer_pattern"] = fit_pattern(mixers, r, "layer_types")


def bamba(r: Reader, d, given) -> dict:
    """BambaConfig: num_hidden_layers layers, attention at attn_layer_indices and Mamba-2 elsewhere, each followed by
    a gated MLP (intermediate_size)."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    attn = set(r.list("attn_layer_indices", int, none_ok=True) or []) if given("attn_layer_indices") else set()
    if any(not 0 <= i < n for i in attn):
        raise r.fail("attn_layer_indices", f"has a layer outside 0..{n - 1}", sorted(attn))
    _hybrid_common(r, d, o, ["G" if i in attn else "M" for i in range(n)])
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    return o


def granitemoehybrid(r: Reader, d, given) -> dict:
    """GraniteMoeHybridConfig: num_hidden_layers layers, each a Mamba-2 mixer or attention (layer_types; absent: every
    layer Mamba) and then MoE (a router D -> num_local_experts, gated experts of intermediate_size, top
    num_experts_per_tok) plus one shared gated MLP of shared_intermediate_size; with num_local_experts 0 the shared
    MLP alone."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    key = "layers_block_type" if r.has("layers_block_type") and not r.has("layer_types") else "layer_types"
    if given(key):  # (layers_block_type: the attribute-map alias of layer_types)
        types = r.list(key, str)
        if len(types) != n:
            raise r.fail(key, f"has {len(types)} entries for num_hidden_layers={n}")
        bad = [t for t in types if t not in _TYPE_LETTERS]
        if bad:
            raise r.fail(key, f"layer type {bad[0]!r} is not one of {', '.join(_TYPE_LETTERS)}")
        mixers = [_TYPE_LETTERS[t] for t in types]
    else:  # GraniteMoeHybridConfig.__post_init__: every layer Mamba
        mixers = ["M"] * n
    _hybrid_common(r, d, o, mixers)
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


def _dt_rank(r: Reader, key: str, d, hidden: int) -> int:
    """A Mamba-1 dt rank: an integer, or 'auto' = ceil(hidden_size / 16) as the config classes derive it."""
    value = r.raw(key, d(key))
    if value == "auto":
        return math.ceil(hidden / 16)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise r.fail(key, "expected a positive integer or 'auto'", value)
    return value


def mamba(r: Reader, d) -> dict:
    """MambaConfig / FalconMambaConfig: num_hidden_layers Mamba-1 blocks (a norm, the mixer, the residual), no FFN;
    the mixer expand x hidden_size wide, dt rank time_step_rank. (Falcon-Mamba's extra RMS norms of dt, B and C are
    elementwise.)"""
    o: dict[str, Any] = {"attention_layer_pattern": "A", "ffn_layer_pattern": "-"}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    # The class's __post_init__ sets intermediate_size = expand x hidden_size, then PreTrainedConfig's sets the
    # file's own intermediate_size over it: a present one is the mixer's width (falcon-mamba-7b: expand 16, 8192)
    expand = r.int("expand", d("expand"), minimum=1)
    o["mamba1_inner_dim"] = r.int("intermediate_size", expand * o["emb_dim"], minimum=1)
    o["mamba1_state_dim"] = r.int("state_size", d("state_size"), minimum=1)
    o["mamba1_conv_kernel"] = r.int("conv_kernel", d("conv_kernel"), minimum=1)
    o["mamba1_dt_rank"] = _dt_rank(r, "time_step_rank", d, o["emb_dim"])
    r.ignore("hidden_act", NO_EFFECT + ": the mixer's conv activation")
    return o


def jamba(r: Reader, d, given) -> dict:
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
        o["mamba1_dt_rank"] = _dt_rank(r, "mamba_dt_rank", d, o["emb_dim"])
    else:
        for k in ("mamba_expand", "mamba_d_state", "mamba_d_conv", "mamba_dt_rank"):
            r.ignore(k, "unused: no Mamba layers")
    return o


def falcon_h1(r: Reader, d, given) -> dict:
    """FalconH1Config: num_hidden_layers layers, each GQA attention and a Mamba-2 mixer on the same normed input
    (their outputs summed; the multipliers scale elementwise), then a gated MLP (intermediate_size). The Mamba width
    is mamba_d_ssm (absent or null: mamba_expand x hidden_size) = mamba_n_heads x mamba_d_head; the attention head
    width is head_dim if the file gives one (the model reads it), else hidden_size // heads."""
    o: dict[str, Any] = {"attention_layer_pattern": "G", "parallel_layer_pattern": "M"}
    o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    # keys of earlier FalconH1 files that transformers 5.24's class no longer has: accepted at the values every
    # layer-has-both model carries, refused otherwise
    if r.has("attn_layer_indices"):
        if r.raw("attn_layer_indices", none_ok=True, record=False) is not None:
            raise r.fail("attn_layer_indices", "not modelled: attention on some layers only (transformers 5.24's "
                                               "FalconH1 puts attention beside Mamba in every layer)",
                         r.data["attn_layer_indices"])
        r.ignore("attn_layer_indices", NO_EFFECT + " (null: attention in every layer)")
    if r.has("mamba_use_mlp"):
        if r.bool("mamba_use_mlp", record=False) is not True:
            raise r.fail("mamba_use_mlp", "not modelled: layers without their MLP", r.data["mamba_use_mlp"])
        r.ignore("mamba_use_mlp", NO_EFFECT + " (true: every layer has its MLP)")
    if r.has("mlp_expansion_factor"):
        r.ignore("mlp_expansion_factor", "superseded by intermediate_size (the MLP width transformers builds)")
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1, none_ok=True)
    o["num_kv_heads"] = heads if kv is None else kv
    hd = r.int("head_dim", minimum=1, none_ok=True) if r.has("head_dim") else None
    o["head_dim"] = hd if hd is not None else o["emb_dim"] // heads
    if not r.has("head_dim"):  # FalconH1Attention: getattr(config, "head_dim", hidden_size // heads)
        r.defaults["head_dim"] = o["head_dim"]
    width = r.int("mamba_d_ssm", d("mamba_d_ssm"), minimum=1, none_ok=True)
    if width is None:
        width = r.int("mamba_expand", d("mamba_expand"), minimum=1) * o["emb_dim"]
    else:
        r.ignore("mamba_expand", f"superseded by mamba_d_ssm ({width})")
    n_heads = r.int("mamba_n_heads", d("mamba_n_heads"), minimum=1)
    head_dim = r.raw("mamba_d_head", d("mamba_d_head"))
    if head_dim == "auto":
        head_dim = width // n_heads
    elif isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim < 1:
        raise r.fail("mamba_d_head", "expected a positive integer or 'auto'", head_dim)
    if n_heads * head_dim != width:
        raise r.fail("mamba_d_head", f"mamba_n_heads x mamba_d_head = {n_heads * head_dim} must equal the Mamba width "
                                     f"{width} (FalconH1Config refuses it)", head_dim)
    o["mamba_num_heads"], o["mamba_head_dim"] = n_heads, head_dim
    o["mamba_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
    o["mamba_n_groups"] = r.int("mamba_n_groups", d("mamba_n_groups"), minimum=1)
    o["mamba_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
    o["mamba_chunk_size"] = r.int("mamba_chunk_size", d("mamba_chunk_size"), minimum=1)
    if n_heads % o["mamba_n_groups"]:
        raise r.fail("mamba_n_groups", f"does not divide mamba_n_heads={n_heads}", o["mamba_n_groups"])
    return o


_ZAMBA2_DEFAULT_TYPES = (["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3
                         + ["hybrid"] + ["mamba"] * 2)  # Zamba2Config's default layers_block_type
_ZAMBA2_TYPES = {"mamba": "mamba", "m": "mamba", "linear_attention": "mamba", "hybrid": "hybrid", "g": "hybrid"}


def zamba2(r: Reader, d, given) -> dict:
    """Zamba2Config: layers_block_type (absent: its default list) of Mamba-2 layers and hybrid layers; a hybrid layer
    is a shared transformer block (one of num_mem_blocks, in turn; attention over [hidden, embedding], 2 x hidden
    wide, heads of 2 x hidden / num_attention_heads, and a gated MLP of intermediate_size, absent: 4 x hidden; its
    per-depth adapters of adapter_rank on the MLP, and on q/k/v with use_shared_attention_adapter), the layer's own
    linear, then a Mamba-2 mixer: maxflops' 'Z' then 'M', neither with an FFN of its own. The Mamba-2 mixer is
    mamba_expand x hidden wide in n_mamba_heads heads."""
    o: dict[str, Any] = {}
    o["emb_dim"] = D = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    if given("layers_block_type"):
        types = r.list("layers_block_type", str)
        if len(types) != n or any(t not in _ZAMBA2_TYPES for t in types):
            raise r.fail("layers_block_type", f"expected {n} entries, each 'mamba' or 'hybrid'")
        types = [_ZAMBA2_TYPES[t] for t in types]
    else:
        types = list(_ZAMBA2_DEFAULT_TYPES)
        if len(types) != n:
            raise r.fail("num_hidden_layers", f"{n}: Zamba2Config's default layers_block_type has {len(types)} "
                                              "layers; give layers_block_type")
    for key in ("kv_channels", "num_query_groups"):  # saved by transformers; modeling_zamba2 never reads them
        if r.has(key):
            r.raw(key, none_ok=True, record=False)
            r.ignore(key, NO_EFFECT + ": modeling_zamba2 never reads it")
    letters = "".join("ZM" if t == "hybrid" else "M" for t in types)
    o["num_decoder_layers"] = len(letters)
    o["attention_layer_pattern"], o["ffn_layer_pattern"] = fit_pattern(list(letters), r, "layers_block_type"), "-"
    heads = r.int("num_mamba_heads" if r.has("num_mamba_heads") else "n_mamba_heads", d("n_mamba_heads"), minimum=1)
    expand = r.int("mamba_expand", d("mamba_expand"), minimum=1)
    if (expand * D) % heads:
        raise r.fail("n_mamba_heads", f"does not divide mamba_expand x hidden_size = {expand * D}", heads)
    o["mamba_num_heads"], o["mamba_head_dim"] = heads, expand * D // heads
    o["mamba_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
    o["mamba_n_groups"] = r.int("mamba_ngroups", d("mamba_ngroups"), minimum=1)
    o["mamba_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
    o["mamba_chunk_size"] = r.int("chunk_size", d("chunk_size"), minimum=1)
    if heads % o["mamba_n_groups"]:
        raise r.fail("mamba_ngroups", f"does not divide the {heads} Mamba heads", o["mamba_n_groups"])
    if "Z" in letters:
        h = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
        kv = r.int("num_key_value_heads", h, minimum=1, none_ok=True)  # absent or null: the heads
        o["num_kv_heads"] = h if kv is None else kv
        width = r.int("intermediate_size", None, minimum=1, none_ok=True, record=False)
        o["zamba_mlp_dim"] = 4 * D if width is None else width
        if width is None:
            r.defaults[r.name("intermediate_size")] = f"{4 * D} (Zamba2Config: 4 x hidden_size)"
        o["zamba_adapter_rank"] = r.int("adapter_rank", d("adapter_rank"), minimum=1)
        o["zamba_attention_adapters"] = r.bool("use_shared_attention_adapter", d("use_shared_attention_adapter"))
        r.ignore("hidden_act", NO_EFFECT + ": the shared block's MLP is gated whatever its activation")
        for key in ("num_mem_blocks", "use_mem_rope", "add_bias_linear"):
            if r.has(key):
                r.ignore(key, NO_EFFECT + " (how many shared blocks take turns, rope, biases)")
    else:
        for key in ("num_attention_heads", "num_key_value_heads", "intermediate_size", "adapter_rank",
                    "use_shared_attention_adapter", "hidden_act", "num_mem_blocks", "use_mem_rope"):
            r.ignore(key, "unused: no hybrid layers")
    # saved by transformers and derived by Zamba2Config.__post_init__ when absent, but a present value is kept (the
    # class sets its kwargs after __post_init__) and modeling_zamba2 sizes its layers by it; the model runs only with
    # the derived value (the shared block's input is [hidden, embedding], its output hidden wide)
    derived = {"attention_hidden_size": 2 * D, "mamba_headdim": expand * D // heads,
               "hybrid_layer_ids": [i for i, t in enumerate(types) if t == "hybrid"]}
    if "Z" in letters:
        derived["attention_head_dim"] = 2 * D // o["num_query_heads"]
    for key in ("attention_head_dim", "attention_hidden_size", "mamba_headdim", "hybrid_layer_ids"):
        if r.has(key):
            value = r.raw(key, none_ok=True, record=False)
            if key in derived and value != derived[key]:
                raise r.fail(key, f"differs from {derived[key]!r}, the value Zamba2Config derives; transformers "
                                  "keeps the file's and its model cannot run with it", value)
            r.ignore(key, "derived: the value Zamba2Config gives it, checked")
    return o
