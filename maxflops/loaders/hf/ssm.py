"""Readers the state-space types share: the Mamba-2 mixer's widths (``mamba2_widths``; under the mamba_* names with
an 'auto' head width, ``mamba_heads``), the widths of Bamba and GraniteMoeHybrid (``hybrid_common``), a Mamba-1 dt
rank (``dt_rank``; ``int_or_auto``, the 'auto' both read), and NemotronH's block names (``hybrid_patterns``, also used
by the shipped NemotronH configs)."""

from __future__ import annotations

import math

from ..reader import Reader, fit_pattern

# NemotronHConfig's block names and the legacy pattern letters -> (mixer letter, FFN letter) of maxflops
NEMOTRON_BLOCKS = {"linear_attention": ("M", "-"), "full_attention": ("G", "-"), "mlp": ("-", "F"),
                    "moe": ("-", "E")}
NEMOTRON_LEGACY = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
NEMOTRON_DEFAULT_BLOCKS = ("linear_attention", "moe", "full_attention", "mlp")
# legacy block names, as transformers renames them (remap_legacy_layer_types)
NEMOTRON_RENAMED = {"mamba": "linear_attention", "attention": "full_attention"}
# NemotronHConfig.__post_init__ reads these legacy names in place of its fields when a file has them
NEMOTRON_ALIASES = {"n_groups": "mamba_n_groups", "conv_kernel": "mamba_d_conv", "chunk_size": "mamba_chunk_size"}
CACHE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}

TYPE_LETTERS = {"linear_attention": "M", "mamba": "M", "full_attention": "G", "attention": "G"}  # (legacy names)



def state_dtype(r: Reader, key: str, o: dict, default=None) -> None:
    """A recurrent state's dtype (``key``: NemotronH's mamba_ssm_cache_dtype, Qwen's mamba_ssm_dtype) as the decode
    state's bytes per element (``state_bytes``)."""
    dtype = r.str(key, default) if default is not None else r.str(key)
    if dtype not in CACHE_BYTES:
        raise r.fail(key, f"expected one of {', '.join(CACHE_BYTES)}", dtype)
    o["state_bytes"] = CACHE_BYTES[dtype]


def hybrid_patterns(hybrid_override_pattern: str) -> dict:
    """NemotronH's layer string (M Mamba-2, * attention, - MLP, E MoE; one block per letter) as maxflops' two
    patterns: {"attention_layer_pattern": ..., "ffn_layer_pattern": ...}, one letter per layer each."""
    bad = [ch for ch in hybrid_override_pattern if ch not in NEMOTRON_LEGACY]
    if bad or not hybrid_override_pattern:
        raise ValueError(f"hybrid_override_pattern {hybrid_override_pattern!r}: expected letters M (Mamba-2), "
                         "* (attention), - (MLP), E (MoE)")
    blocks = [NEMOTRON_BLOCKS[NEMOTRON_LEGACY[ch]] for ch in hybrid_override_pattern]
    return {"attention_layer_pattern": "".join(b[0] for b in blocks),
            "ffn_layer_pattern": "".join(b[1] for b in blocks)}


def mamba2_widths(r: Reader, d, o: dict, heads_key: str, head_dim_key: str, state_key: str, aliases=None) -> None:
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


def hybrid_common(r: Reader, d, o: dict, mixers: list) -> None:
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
        mamba_heads(r, d, o, heads, width, f"mamba_expand x hidden_size = {width} (the config class refuses it)")
    else:
        for k in ("mamba_n_heads", "mamba_expand", "mamba_d_head", "mamba_d_state", "mamba_n_groups", "mamba_d_conv",
                  "mamba_chunk_size"):
            r.ignore(k, "unused: no Mamba layers")
    o["attention_layer_pattern"] = fit_pattern(mixers, r, "layer_types")


def mamba_heads(r: Reader, d, o: dict, heads: int, width: int, width_is: str) -> None:
    """The Mamba-2 mixer under the mamba_* names (Bamba, GraniteMoeHybrid, Falcon-H1): ``heads`` (mamba_n_heads, read
    by the caller) of mamba_d_head ('auto': width // heads) must make the mixer's ``width`` (``width_is``: how the
    error says it); then its state, groups, conv kernel and chunk."""
    head_dim = int_or_auto(r, "mamba_d_head", d, width // heads)
    if heads * head_dim != width:
        raise r.fail("mamba_d_head", f"mamba_n_heads x mamba_d_head = {heads * head_dim} must equal {width_is}",
                     head_dim)
    o["mamba_num_heads"], o["mamba_head_dim"] = heads, head_dim
    o["mamba_state_dim"] = r.int("mamba_d_state", d("mamba_d_state"), minimum=1)
    o["mamba_n_groups"] = r.int("mamba_n_groups", d("mamba_n_groups"), minimum=1)
    o["mamba_conv_kernel"] = r.int("mamba_d_conv", d("mamba_d_conv"), minimum=1)
    o["mamba_chunk_size"] = r.int("mamba_chunk_size", d("mamba_chunk_size"), minimum=1)
    if heads % o["mamba_n_groups"]:
        raise r.fail("mamba_n_groups", f"does not divide mamba_n_heads={heads}", o["mamba_n_groups"])


def int_or_auto(r: Reader, key: str, d, auto: int) -> int:
    """A positive integer, or 'auto' for ``auto`` (what the config class derives in its place)."""
    value = r.raw(key, d(key))
    if value == "auto":
        return auto
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise r.fail(key, "expected a positive integer or 'auto'", value)
    return value


def dt_rank(r: Reader, key: str, d, hidden: int) -> int:
    """A Mamba-1 dt rank: an integer, or 'auto' = ceil(hidden_size / 16) as the config classes derive it."""
    return int_or_auto(r, key, d, math.ceil(hidden / 16))
