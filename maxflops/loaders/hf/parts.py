"""Readers the model types share: the attention widths (GQA's head_dim rule, MLA, the DSA indexer), the FFN rules
(dense, a MoE of local experts, Qwen's sparse step, DeepSeek's dense prefix and frequency), the layer rules (global,
``layer_types``, Qwen's window start, a window on every layer), and small helpers (``given``, ``alias``).

A model type's module picks among them (``HFType`` fields) and keeps only what is its own."""

from __future__ import annotations

import functools

from ...families import FAMILIES
from ..reader import MISSING, NO_EFFECT, Reader, fit_index
from .ssm import state_dtype

# a layer_types entry -> its pattern letter, as each family declares it (maxflops.families)
LETTERS = {t: letter for fam in FAMILIES for t, letter in fam.hf_layer_types.items()}


def given(r: Reader, key: str) -> bool:
    """``key`` is present and not null. A null is read here (not reported as not understood): the config class's
    __post_init__ derives such a key (a per-layer list, compress_rates) as when it is absent."""
    if r.has(key) and r.data[key] is None:
        r.raw(key, none_ok=True, record=False)
        return False
    return r.has(key)


def alias(r: Reader, saved: str, field: str, default, minimum: int = 0):
    """A field written under its saved name or its attribute-map alias (both build the model); both present must
    agree."""
    if r.has(field) and not r.has(saved):
        return r.int(field, minimum=minimum)
    value = r.int(saved, default, minimum=minimum)
    if r.has(field):
        if r.int(field) != value:
            raise r.fail(field, f"disagrees with {saved}={value}")
        r.ignore(field, f"superseded: same as {saved}")
    return value


def layer_types(r: Reader, n: int, kinds) -> list:
    """``layer_types`` read into letters: ``kinds`` is a set of allowed letters (the families' names for them) or a
    {name: letter} mapping of the type's own names."""
    types = r.list("layer_types", str)
    if len(types) != n:
        raise r.fail("layer_types", f"has {len(types)} entries for num_hidden_layers={n}")
    letters = []
    for t in types:
        letter = kinds.get(t) if isinstance(kinds, dict) else LETTERS.get(t)
        if letter is None or letter not in (set(kinds.values()) if isinstance(kinds, dict) else kinds):
            raise r.fail("layer_types", f"layer type {t!r} is not supported for this model type")
        letters.append(letter)
    return letters


def per_layer(r: Reader, key: str, n: int, kinds: dict) -> list:
    """A per-layer list of names (``mlp_layer_types``, ...) read into ``kinds``' values."""
    types = r.list(key, str)
    if len(types) != n or any(t not in kinds for t in types):
        raise r.fail(key, f"expected {n} entries, each " + " or ".join(map(repr, kinds)))
    return [kinds[t] for t in types]


# --- attention widths ------------------------------------------------------------------------------------------------


def gqa(r: Reader, d, o: dict) -> None:
    """head_dim: the file's, else the class's default, else (absent or null) hidden_size // num_attention_heads."""
    derived = o["emb_dim"] // o["num_query_heads"]
    hd = r.int("head_dim", d("head_dim") if d("head_dim") is not MISSING else derived, minimum=1, none_ok=True)
    o["head_dim"] = derived if hd is None else hd


def gqa_value_head_dim(r: Reader, d, o: dict) -> None:
    """GQA with values narrower than queries and keys (v_head_dim)."""
    gqa(r, d, o)
    hv = r.int("v_head_dim", d("v_head_dim"), minimum=1)
    if hv != o["head_dim"]:
        o["value_head_dim"] = hv


def mla(*, keeps_rotary_head_dim: bool = False, reads_qk_head_dim: bool = False, dsa: bool = False,
        index_freq: int = 1):
    """MLA's widths, as an ``HFType.attention``. ``keeps_rotary_head_dim``: the config class keeps a present
    head_dim and the rotary embedding is that wide (so one other than qk_rope_head_dim cannot run);
    ``reads_qk_head_dim``: the model sizes q by config.qk_head_dim, which must then be qk_nope_head_dim +
    qk_rope_head_dim (the others derive it and never read a present one); ``dsa``: the type always has the DeepSeek
    sparse attention indexer (others have it when the file gives index_topk); ``index_freq``: the class's own rule
    when the file names no schedule (HY-V4's: every fourth layer from layer 1, and layer 0)."""
    return functools.partial(_mla, keeps_rotary_head_dim=keeps_rotary_head_dim,
                             reads_qk_head_dim=reads_qk_head_dim, dsa=dsa, index_freq=index_freq)


def _mla(r: Reader, d, o: dict, *, keeps_rotary_head_dim: bool, reads_qk_head_dim: bool, dsa: bool,
         index_freq: int = 1) -> None:
    o["attention_type"] = "mla"
    q = r.int("q_lora_rank", d("q_lora_rank"), none_ok=True)
    o["q_lora_rank"] = 0 if q is None else q  # null: q projected directly from D (DeepSeek-V2-Lite)
    for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        o[key] = r.int(key, d(key), minimum=1 if key in ("kv_lora_rank", "v_head_dim") else 0)
    if r.has("head_dim") and keeps_rotary_head_dim and \
            r.int("head_dim", minimum=1, record=False) != o["qk_rope_head_dim"]:
        raise r.fail("head_dim", f"differs from qk_rope_head_dim={o['qk_rope_head_dim']}: {r.model_type}'s "
                                 "config class keeps a present head_dim and its rotary embedding is that wide, so "
                                 "transformers' model cannot run (the rope slice of q and k is qk_rope_head_dim wide)")
    r.ignore("head_dim", "unused: MLA widths come from qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
    if r.has("qk_head_dim") and reads_qk_head_dim:
        qk = r.int("qk_head_dim")
        if qk != o["qk_nope_head_dim"] + o["qk_rope_head_dim"]:
            raise r.fail("qk_head_dim", f"is not qk_nope_head_dim + qk_rope_head_dim = "
                                        f"{o['qk_nope_head_dim'] + o['qk_rope_head_dim']} (the model splits q into "
                                        "the two)")
        r.ignore("qk_head_dim", "superseded: derived (qk_nope_head_dim + qk_rope_head_dim), checked")
    elif r.has("qk_head_dim"):
        r.ignore("qk_head_dim", NO_EFFECT + ": the model derives q's width from qk_nope_head_dim + qk_rope_head_dim "
                                "(the config class keeps a present value; the modeling code never reads it)")
    if r.has("num_nextn_predict_layers") or d("num_nextn_predict_layers") is not MISSING:
        o["mtp_num_layers"] = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"))

    # DeepSeek sparse attention: the index_* keys (DeepSeek-V3.2, GLM-5).
    if dsa or r.has("index_topk"):
        o["use_sparse_indexer"] = True
        o["index_n_heads"] = r.int("index_n_heads", d("index_n_heads"), minimum=1)
        o["index_head_dim"] = r.int("index_head_dim", d("index_head_dim"), minimum=1)
        o["index_topk"] = r.int("index_topk", d("index_topk"), minimum=1)
        full, key, prefer = _index_schedule(r, o["num_decoder_layers"], index_freq)
        freq, offset = fit_index(full, r, key, prefer)
        if freq != 1:  # with freq 1 every layer computes its own top-k, whatever the offset
            o["index_topk_freq"] = freq
            o["index_skip_offset"] = offset
    else:
        for key in ("index_n_heads", "index_head_dim", "index_topk_freq", "index_skip_topk_offset",
                    "indexer_types", "index_topk_pattern"):
            r.ignore(key, "unused: no index_topk, so no DSA indexer")
    if r.has("index_share_for_mtp_iteration"):
        r.raw("index_share_for_mtp_iteration")
        r.ignore("index_share_for_mtp_iteration",
                 "not modelled: index sharing across MTP iterations (maxflops applies its reuse rule to MTP "
                 "modules numbered from 1)")


def _index_schedule(r: Reader, n: int, default_freq: int = 1):
    """Per-layer 'runs its own indexer' list, as GlmMoeDsaConfig builds it: indexer_types, else
    index_topk_pattern ('F'/'S'), else full iff max(i - offset + 1, 0) % freq == 0 (offset default 2; freq default
    ``default_freq``)."""
    if given(r, "indexer_types"):
        full = per_layer(r, "indexer_types", n, {"full": True, "shared": False})
        for k in ("index_topk_freq", "index_skip_topk_offset", "index_topk_pattern"):
            r.ignore(k, "superseded by indexer_types")
        return full, "indexer_types", None
    if given(r, "index_topk_pattern"):
        pat = r.str("index_topk_pattern")
        if len(pat) != n or set(pat) - set("FS"):
            raise r.fail("index_topk_pattern", f"expected {n} letters, each F (full) or S (shared)")
        for k in ("index_topk_freq", "index_skip_topk_offset"):
            r.ignore(k, "superseded by index_topk_pattern")
        return [c == "F" for c in pat], "index_topk_pattern", None
    # absent: freq 1 (every layer computes) and GlmMoeDsaConfig's offset 2 (which matters only with freq > 1)
    freq = r.int("index_topk_freq", default_freq, minimum=1, record=False)
    if default_freq != 1 and not r.has("index_topk_freq"):
        r.defaults[r.name("indexer_types")] = f"full on layer 0 and every {default_freq}th from layer 1 (the class's)"
    offset = r.int("index_skip_topk_offset", 2, record=False)
    key = "index_skip_topk_offset" if r.has("index_skip_topk_offset") else "index_topk_freq"
    full = [max(i - offset + 1, 0) % freq == 0 for i in range(n)]
    return full, key, (freq, offset)


def mtp_layers(r: Reader, d, o: dict, pattern: str) -> None:
    """MTP modules (num_nextn_predict_layers, saved by some classes as num_mtp_layers; transformers builds none),
    counted in training as maxflops' MTP modules."""
    key = "num_mtp_layers" if r.has("num_mtp_layers") and not r.has("num_nextn_predict_layers") \
        else "num_nextn_predict_layers"
    o["mtp_num_layers"] = r.int(key, d("num_nextn_predict_layers"), minimum=0)


def output_gate(r: Reader, d, o: dict, pattern: str) -> None:
    """The attention's q projection also emits a per-head sigmoid output gate (Qwen3-Next's attn_output_gate)."""
    o["attention_output_gate"] = r.bool("attn_output_gate", True, record=False)


def gated_delta_net(r: Reader, d, o: dict, pattern: str) -> None:
    """Qwen3-Next's gated delta net widths (linear_*), and the attention's output gate."""
    for src, dst in (("linear_num_key_heads", "gdn_num_key_heads"),
                     ("linear_num_value_heads", "gdn_num_value_heads"),
                     ("linear_key_head_dim", "gdn_key_head_dim"),
                     ("linear_value_head_dim", "gdn_value_head_dim"),
                     ("linear_conv_kernel_dim", "gdn_conv_kernel_dim")):
        o[dst] = r.int(src, d(src), minimum=1)
    output_gate(r, d, o, pattern)


# --- FFN rules -------------------------------------------------------------------------------------------------------


def dense_ffn(r: Reader, d, o: dict, n: int):
    """Every layer a dense FFN."""
    return [False] * n, "num_hidden_layers"


def shared_count(r: Reader, key: str, width: int, moe_width: int) -> int:
    """A shared expert of width k * moe_width costs as k shared experts of moe_width (the schema's unit: the schema
    uses moe_mlp_dim for the shared experts too)."""
    if width % moe_width:
        raise r.fail(key, f"a shared expert of width {width} is not a whole number of experts of "
                          f"moe_intermediate_size={moe_width}; the schema sizes shared experts by moe_mlp_dim, so "
                          "it cannot express this width", width)
    k = width // moe_width
    if k != 1:  # used, but say how
        r.ignored[r.name(key)] = (f"used as {k} shared experts of moe_intermediate_size={moe_width}: the same "
                                  "FLOPs as one shared expert of this width (the schema sizes shared experts by "
                                  "moe_mlp_dim)")
    return k


def local_experts(experts: str = "num_local_experts", width: str = "intermediate_size",
                  experts_alias: str | None = None, topk_alias: str | None = None):
    """A MoE on every layer (Mixtral, gpt-oss, MiniMax): ``experts`` experts of ``width`` (its alias, when the class
    maps one, read as the same), top num_experts_per_tok."""
    def ffn(r: Reader, d, o: dict, n: int):
        if experts_alias:
            o["num_experts"] = alias(r, experts, experts_alias, d(experts), minimum=1)
        else:
            o["num_experts"] = r.int(experts, d(experts), minimum=1)
        o["moe_mlp_dim"] = r.int(width, d(width), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        if topk_alias and r.has(topk_alias):
            if r.int(topk_alias) != o["num_experts_per_tok"]:
                raise r.fail(topk_alias, f"disagrees with num_experts_per_tok={o['num_experts_per_tok']}")
            r.ignore(topk_alias, "superseded: same as num_experts_per_tok")
        return [True] * n, experts
    return ffn


def qwen_moe_layers(r: Reader, n: int):
    """Qwen's rule: MoE iff layer not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0."""
    # absent: every layer is MoE (the Qwen3MoeConfig / Qwen3NextConfig defaults 1 and [])
    step = r.int("decoder_sparse_step", 1, minimum=1, record=False)
    only = r.list("mlp_only_layers", int, [], none_ok=True, record=False) or []
    key = "mlp_only_layers" if only else "decoder_sparse_step"
    return [l not in set(only) and (l + 1) % step == 0 for l in range(n)], key


def qwen_moe(r: Reader, d, o: dict, n: int):
    """Qwen3-MoE: num_experts (its alias num_local_experts) of moe_intermediate_size, Qwen's layer rule."""
    if r.has("num_local_experts") and not r.has("num_experts"):
        o["num_experts"] = r.int("num_local_experts", minimum=1)
    else:
        o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
        if r.has("num_local_experts"):
            if r.int("num_local_experts") != o["num_experts"]:
                raise r.fail("num_local_experts", f"disagrees with num_experts={o['num_experts']}")
            r.ignore("num_local_experts", "superseded: same as num_experts")
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    return qwen_moe_layers(r, n)


def qwen_moe_shared(r: Reader, d, o: dict, n: int):
    """Qwen3-Next's MoE: num_experts of moe_intermediate_size and one sigmoid-gated shared expert of
    shared_expert_intermediate_size, Qwen's layer rule."""
    o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    moe = o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    shared = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"))
    if shared:
        if shared % moe:  # one shared expert of its own width
            o["shared_experts"], o["shared_expert_mlp_dim"] = 1, shared
        else:
            o["shared_experts"] = shared_count(r, "shared_expert_intermediate_size", shared, moe)
        o["shared_expert_gate"] = True  # shared_expert_gate: Linear(hidden, 1), sigmoid
    return qwen_moe_layers(r, n)


def deepseek_moe(*, first_dense: int | None = None):
    """DeepSeek's MoE: n_routed_experts of moe_intermediate_size, n_shared_experts (absent: the class default;
    null: none), on the layers mlp_layer_types calls sparse, else on layer l iff l >= first_k_dense_replace and
    l % moe_layer_freq == 0. ``first_dense``: the class reads neither of those two (its mlp_layer_types' default
    makes the first ``first_dense`` layers dense)."""
    def ffn(r: Reader, d, o: dict, n: int):
        o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        o["shared_experts"] = r.int("n_shared_experts", d("n_shared_experts"), none_ok=True) or 0
        if given(r, "mlp_layer_types"):
            is_moe = per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True})
            for key in ("first_k_dense_replace", "moe_layer_freq"):
                r.ignore(key, "superseded by mlp_layer_types")
            return is_moe, "mlp_layer_types"
        if first_dense is not None:
            for key in ("first_k_dense_replace", "moe_layer_freq"):
                r.ignore(key, f"not read by this config class (its mlp_layer_types, absent: the first {first_dense} "
                              "dense)")
            return [l >= first_dense for l in range(n)], "num_hidden_layers"
        k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
        freq = r.int("moe_layer_freq", 1, minimum=1, record=False)
        key = "moe_layer_freq" if freq != 1 else "first_k_dense_replace"
        return [l >= k and l % freq == 0 for l in range(n)], key
    return ffn


# --- layer rules -----------------------------------------------------------------------------------------------------


def global_layers(r: Reader, d, n: int):
    """Every layer global attention (layer_types, when given, may say only that)."""
    if given(r, "layer_types"):
        return layer_types(r, n, {"G"}), "layer_types"
    return ["G"] * n, "num_hidden_layers"


def typed_layers(allowed: str, default):
    """layer_types with the letters ``allowed``, else ``default(i, n)`` -> letter for layer i."""
    def rule(r: Reader, d, n: int):
        if given(r, "layer_types"):
            return layer_types(r, n, set(allowed)), "layer_types"
        return [default(i, n) for i in range(n)], "num_hidden_layers"
    return rule


def window_every_layer(r: Reader, d, n: int):
    """A non-null sliding_window applies to every layer (Mistral, Mixtral: layer_types is not read)."""
    r.ignore("layer_types", "not modelled: this model type ignores layer_types (the window applies to every layer)")
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True)
    return ["L" if window is not None else "G"] * n, "sliding_window"


def qwen_windows(r: Reader, d, n: int):
    """Qwen2Config / Qwen3Config.__post_init__: sliding_window is nulled unless use_sliding_window; absent
    layer_types, the layers from max_window_layers on slide when the window is not null. A sliding layer without a
    window cannot run (transformers' sliding mask refuses a null sliding_window)."""
    slide = r.bool("use_sliding_window", d("use_sliding_window"))
    window = r.raw("sliding_window", d("sliding_window"), none_ok=True, record=False) if slide else None
    if not slide:
        r.ignore("use_sliding_window", NO_EFFECT + " (false)")
    if given(r, "layer_types"):
        r.ignore("max_window_layers", "superseded by layer_types")
        letters = layer_types(r, n, {"G", "L"})
        if "L" in letters and window is None:
            raise r.fail("layer_types", "has sliding layers but no window (the config class nulls sliding_window "
                                        "unless use_sliding_window; transformers' sliding mask then refuses)")
        return letters, "layer_types"
    if window is None:
        r.ignore("max_window_layers", "unused: no window (use_sliding_window false or sliding_window null)")
        return ["G"] * n, "num_hidden_layers"
    start = r.int("max_window_layers", d("max_window_layers"))
    return ["L" if i >= start else "G" for i in range(n)], "max_window_layers"


def qwen_window(*, every_layer: bool = False):
    """Qwen's windows: layer_types, else with use_sliding_window the layers from max_window_layers on (or
    ``every_layer``: Qwen3-MoE's attention windows every layer), else global."""
    def rule(r: Reader, d, n: int):
        if given(r, "layer_types"):
            for k in ("use_sliding_window", "max_window_layers"):
                r.ignore(k, "superseded by layer_types")
            return layer_types(r, n, {"G", "L"}), "layer_types"
        if r.has("use_sliding_window") and r.bool("use_sliding_window"):
            if every_layer:
                r.ignore("max_window_layers", "unused: this model type applies the window to every layer")
                return ["L"] * n, "use_sliding_window"
            start = r.int("max_window_layers", d("max_window_layers"))
            return ["L" if i >= start else "G" for i in range(n)], "max_window_layers"
        r.ignore("use_sliding_window", NO_EFFECT + " (false)")
        r.ignore("max_window_layers", "unused: use_sliding_window is false")
        return ["G"] * n, "num_hidden_layers"
    return rule


def interval_layers(letter: str):
    """Full attention every full_attention_interval-th layer, ``letter`` (a linear mixer) elsewhere; layer_types,
    when given, wins (Qwen3-Next, Qwen3.5)."""
    def rule(r: Reader, d, n: int):
        if given(r, "layer_types"):
            r.ignore("full_attention_interval", "superseded by layer_types")
            return layer_types(r, n, {"G", letter}), "layer_types"
        interval = r.int("full_attention_interval", d("full_attention_interval"), minimum=1)
        return [letter if (i + 1) % interval else "G" for i in range(n)], "full_attention_interval"
    return rule


def qwen_mtp(r: Reader, d, o: dict, pattern: str) -> None:
    """Qwen's own checkpoint keys beside transformers' (Qwen3-Next, Qwen3.5, Qwen3.6; the classes keep them, the
    model builds no MTP): mtp_num_hidden_layers MTP modules, each an eh projection, one full-attention layer as the
    model's (its FFN the last layer's) and the logits (vLLM's and Megatron's Qwen3-Next MTP), counted in training;
    mtp_use_dedicated_embeddings (a lookup table) no FLOPs; mamba_ssm_dtype, the recurrent state's dtype, sizes the
    decode state bytes."""
    depth = r.int("mtp_num_hidden_layers", 0, minimum=0, record=False)
    if depth:
        o["mtp_num_layers"], o["mtp_layer_pattern"] = depth, "G"
    if r.has("mtp_use_dedicated_embeddings"):
        r.bool("mtp_use_dedicated_embeddings")
        r.ignore("mtp_use_dedicated_embeddings", NO_EFFECT + " (the MTP module's own embedding table: a lookup)")
    if r.has("mamba_ssm_dtype"):
        state_dtype(r, "mamba_ssm_dtype", o)


# --- moved from the type modules that shared them -------------------------------------------------------------


def mha(r: Reader, d, o: dict) -> None:
    """Multi-head attention, hidden_size // num_attention_heads per head: the attention reads neither head_dim nor
    num_key_value_heads (a head_dim the class keeps sizes at most a rotary embedding)."""
    o["head_dim"] = o["emb_dim"] // o["num_query_heads"]
    o["num_kv_heads"] = o["num_query_heads"]
    r.ignore("head_dim", "not read by the attention (hidden_size // num_attention_heads per head)")
    r.ignore("num_key_value_heads", "not read: every head has its own keys and values (multi-head attention)")


def no_layerdrop(r: Reader, d, o: dict, pattern: str) -> None:
    """LayerDrop: in training each decoder layer is skipped with probability layerdrop (0: none)."""
    if r.float("layerdrop", d("layerdrop")):
        raise r.fail("layerdrop", "LayerDrop skips each decoder layer at random in training (a step's FLOPs depend "
                                  "on the draw); maxflops counts every layer, so only 0 is read")


def split_heads(r: Reader, d, o: dict) -> None:
    """Qwen2VLAttention: head_dim = hidden_size // num_attention_heads (a ValueError unless it divides); a head_dim
    key is never read."""
    if o["emb_dim"] % o["num_query_heads"]:
        raise r.fail("num_attention_heads", f"does not divide hidden_size={o['emb_dim']} (the attention refuses it)")
    o["head_dim"] = o["emb_dim"] // o["num_query_heads"]
    r.ignore("head_dim", "not read: the attention's head_dim is hidden_size // num_attention_heads")


def aliased(r: Reader, d, saved: str, aliases: tuple, minimum: int = 0) -> int:
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
