"""MaxText's config keys -> maxflops schema overrides: one mapping for MaxText's config object, a mapping or
attribute object with MaxText's key names, and a MaxText model YAML.

``map_keys(data, label, derive=...)`` reads ``data`` (MaxText key -> value) through a ``Reader``: every key is
used, reported with a reason (``Loaded.ignored``), or an error naming it. Absent keys take MaxText's ``base.yml``
value (``keys.BASE``). With ``derive`` (a model YAML), the widths MaxText derives in ``pyconfig`` (``emb_dim``
from ``base_emb_dim`` and ``global_parameter_scale``, ...) are derived here the same way; otherwise the derived
keys are read as they are (MaxText's FLOPs function and its model read those).

What each decoder block is made of lives in ``BLOCKS`` (data, not branches): its fixed attention pattern or the
key that derives it, whether its layers are pairs (gemma2), which MoE-structure keys its code reads, its gates,
and where MaxText's own FLOPs function counts it differently from its code (``maxtext_quirks``, applied only
under ``convention='maxtext'``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ..reader import NO_EFFECT, NOT_UNDERSTOOD, VISION as VISION_PART, Loaded, Reader, refuse_unknown, validate_overrides
from . import keys as K
from ..schema import SCHEMA

SCHEMA_REMAT = frozenset(SCHEMA["remat_policy"].choices) - {"reversible"}  # (no MaxText policy: Reformer's)


@dataclasses.dataclass(frozen=True)
class Block:
    pattern: str | None  # cyclic attention pattern (G/L/C/D), or None: derived from pattern_from (see _pattern)
    pattern_from: str = ""  # "nope_layer_interval" (llama4) or "inhomogeneous_layer_cycle_interval" (qwen3-next)
    layer_pairs: bool = False  # one MaxText layer = a local and a global layer (gemma2)
    dense_prefix: bool = False  # the code reads first_num_dense_layers
    interleave: bool = False  # the code reads interleave_moe_layer_step
    shared: bool = False  # the code runs shared_experts
    gated: bool = False  # qwen3-next family: attention output gate and shared-expert gate
    global_widths: bool = False  # global layers: global_head_dim, global_num_kv_heads, share_kv_projections
    kv_sharing: bool = False  # num_kv_shared_layers, use_double_wide_mlp, per-layer embeddings (gemma4_small)
    engram_mhc: bool = False  # engram_layers and mhc_expansion_rate (deepseek)
    pattern_by_model: tuple = ()  # (model_name, pattern): the model code picks the pattern by name
    vision: str = ""  # the vision encoder MaxText's function counts with use_multimodal (VISION)
    post_ffn_norm: str = ""  # "always" (the model code norms the FFN output), "key" (use_post_ffw_norm decides)
    qkv_norms: str = ""  # norms on the projected q, k (v): "qk", "qkv", "key" (use_qk_norm decides: "qk" or none),
    # "key_rope" (use_qk_norm decides: q/k of the RoPE layers, llama4)
    cycle_remat: bool = False  # a scanned block of inhomogeneous_layer_cycle_interval layers is one remat unit, its
    # layers' kinds (MoE, NoPE) set by their place in the block
    block_pattern: bool = False  # with cycle_remat: a scanned block's layers take ``pattern``'s letters by their
    # place in the block (gpt_oss, olmo3: a block of one layer is all local); unscanned, by the layer's number
    router_on_input: bool = False  # the router's weights scale the routed experts' input (llama4)
    latent_ffn: bool = False  # attention_output_dim / moe_expert_input_dim (qwen3_custom_moe)
    shared_width: str = ""  # the key sizing each shared expert when it is not moe_mlp_dim (gemma4: mlp_dim)
    compressed: bool = False  # DeepSeek-V4: compress_ratios per layer, grouped low-rank output, mHC hyper head
    maxtext_quirks: tuple = ()  # (knob, value) MaxText's FLOPs function uses for this block
    note: str = ""


# MaxText 0.2.5's decoder blocks (models/*.py). Patterns hard-coded in the model files: gemma3 5 local : 1 global,
# gpt_oss local first, olmo3 3 sliding : 1 global, gemma2 a local and a global block per MaxText layer.
BLOCKS: dict[str, Block] = {
    "llama2": Block("G"), "mistral": Block("G"), "mixtral": Block("G"), "gemma": Block("G"),
    "qwen2": Block("G", qkv_norms="key"), "qwen3": Block("G", qkv_norms="key"),
    "qwen3_moe": Block("G", qkv_norms="key"), "gpt3": Block("G"),
    # deepseek: Engram blocks and mHC streams are optional; MaxText's function leaves mHC out for this block.
    "deepseek": Block("G", dense_prefix=True, shared=True, engram_mhc=True, maxtext_quirks=(("mhc_flops", False),)),
    "gemma2": Block("LG", layer_pairs=True, post_ffn_norm="always"),
    "gemma3": Block("LLLLLG", vision="gemma3", post_ffn_norm="always", qkv_norms="qk"),
    "gpt_oss": Block("LG", cycle_remat=True, block_pattern=True),
    # MaxText's function has no olmo3 branch: it counts the sliding layers as global.
    "olmo3": Block("LLLG", qkv_norms="key", post_ffn_norm="always", maxtext_quirks=(("window_pairs", "global"),),
                   cycle_remat=True, block_pattern=True),
    "llama4": Block(None, "nope_layer_interval", interleave=True, shared=True, vision="llama4", qkv_norms="key_rope",
                    cycle_remat=True, router_on_input=True),
    "qwen3_next": Block(None, "inhomogeneous_layer_cycle_interval", shared=True, gated=True, qkv_norms="qk"),
    "qwen3_5": Block(None, "inhomogeneous_layer_cycle_interval", shared=True, gated=True, qkv_norms="qk",
                     note="run as qwen3-next"),
    # envy: dense and MoE layers alternate (interleave_moe_layer_step); MaxText's function charges MoE on every
    # layer, as for any block it has no dense/MoE rule for.
    # gemma4: layer i is global iff i % 6 == 5, with its own head width and KV heads, K reused as V; the shared
    # expert (sized by mlp_dim) runs beside the routed ones on every layer.
    # qwen3_custom_moe: attention projects to attention_output_dim, the MoE runs on that latent, an up-projection
    # returns to emb_dim (one residual per layer).
    "qwen3_custom_moe": Block("G", latent_ffn=True, qkv_norms="key"),
    "gemma4": Block("LLLLLG", shared=True, global_widths=True, shared_width="mlp_dim", post_ffn_norm="key",
                    qkv_norms="qkv"),
    # gemma4_small (E2B/E4B): gemma4_small.build_layer_types picks 4 local : 1 global for gemma4-e2b, else 5 : 1;
    # the last num_kv_shared_layers layers reuse K/V (E2B's run a double-wide MLP); per-layer embeddings.
    "gemma4_small": Block("LLLLLG", global_widths=True, kv_sharing=True, post_ffn_norm="key", qkv_norms="qkv",
                          pattern_by_model=(("gemma4-e2b", "LLLLG"),)),
    "envy": Block("G", interleave=True, post_ffn_norm="key", qkv_norms="key", cycle_remat=True,
                  maxtext_quirks=(("ffn_all_moe", True),)),
    # deepseek4: attention_type 'compressed'; compress_ratios gives each layer's ratio (0 sliding window, 4 CSA,
    # above 4 HCA); every layer MoE with a shared expert; mHC streams collapsed by a hyper head. MaxText's function
    # counts the window as T*W - W^2/2 (also when T < W), files the indexer's projections under attention, never
    # skips the indexer, and leaves the hyper head out.
    "deepseek4": Block(None, shared=True, compressed=True,
                       maxtext_quirks=(("window_pairs", "unclamped"), ("indexer_proj_split", "attention"),
                                       ("indexer_skip_within_topk", False), ("mhc_head_flops", False))),
}
SUPPORTED = tuple(sorted(BLOCKS))
REFUSED: dict[str, str] = {}

# The widths pyconfig derives: derived key -> (base key, which power-of-two scale applies).
DERIVED = (("emb_dim", "base_emb_dim", 0), ("num_query_heads", "base_num_query_heads", 1),
           ("num_kv_heads", "base_num_kv_heads", 1), ("mlp_dim", "base_mlp_dim", 2),
           ("moe_mlp_dim", "base_moe_mlp_dim", 2), ("num_decoder_layers", "base_num_decoder_layers", 3))

# DeepSeek sparse attention: (MaxText 0.2.5 name, the earlier name also accepted, schema key).
INDEXER = (("use_indexer", "use_sparse_indexer", "use_sparse_indexer"),
           ("indexer_n_heads", "index_n_heads", "index_n_heads"),
           ("indexer_head_dim", "index_head_dim", "index_head_dim"),
           ("indexer_topk", "index_topk", "index_topk"))

# MaxText remat policies (its 'none' in a scanned decoder is jax.checkpoint with no policy: full remat). Those
# that save names are priced for GQA, MLA, DSA and gated-delta-net layers with a dense or MoE FFN (experts carry
# the MLP's names; MLA's latents, the gated delta net's projections and a shared expert's gate carry none; q and k
# normed after their projection are recomputed); compressed layers are not yet checked against MaxText's program.
REMAT_SIMPLE = {"full": "full", "none": "full"}

GDN = ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim", "gdn_conv_kernel_dim")
MLA = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


def maxtext_quirks(block: str) -> tuple:
    """The ``convention_quirks`` entries of a decoder block: where MaxText's FLOPs function counts it its own way
    (also carried by configs of that model from elsewhere: the Hugging Face loader, the shipped configs)."""
    return tuple(f"maxtext:{k}={v}" for k, v in BLOCKS[block].maxtext_quirks)


def classify(key: str) -> str:
    """The reason reported for a key the mapping did not read."""
    if key in K.NO_EFFECT:
        return NO_EFFECT
    if key.endswith("_for_vit") or key.endswith("_for_audio") or key.startswith(("vision_", "image_")):
        return VISION_PART
    if key in K.MODEL_KEYS or key in K.IMPLEMENTATION_KEYS:
        return "unused: not read for this decoder block"
    return NOT_UNDERSTOOD


OLD_NAMES = frozenset(old for _, old, _ in INDEXER)


def is_maxtext_key(key: str) -> bool:
    return (key in K.MODEL_KEYS or key in K.IMPLEMENTATION_KEYS or key in K.NO_EFFECT or key in K.UNPRICED
            or key in OLD_NAMES)


def _scales(r: Reader) -> tuple[int, int, int, int]:
    """pyconfig's get_individual_scales(global_parameter_scale): (emb, heads, mlp, layers) powers of two."""
    scale = r.int("global_parameter_scale", K.BASE["global_parameter_scale"], minimum=1, record=False)
    if scale & (scale - 1):
        raise r.fail("global_parameter_scale", "must be a power of two (MaxText's rule)")
    base, rem = divmod(scale.bit_length() - 1, 3)
    heads = base + int(rem > 0)
    return base + int(rem > 1), heads, heads, base


def source_key(schema_key: str) -> str:
    """The MaxText key that sets a schema key (``base_emb_dim`` for ``emb_dim``, ``indexer_topk`` for
    ``index_topk``); the schema key itself where MaxText uses the same name."""
    for schema, base, _ in DERIVED:
        if schema == schema_key:
            return base
    for name, _, schema in INDEXER:
        if schema == schema_key:
            return name
    return schema_key


def map_keys(data: Mapping[str, Any], label, *, derive: bool, report: bool = True, name_hint: str = "",
             unknown: str = "error") -> Loaded:
    """MaxText keys -> schema overrides (see the module docstring). ``report=False`` skips classifying the keys
    not read (``Loaded.ignored`` is then partial; ``from_maxtext`` has checked every key already). ``name_hint``:
    the model name when ``data`` has none (a YAML is named by its file). ``unknown``: 'error' (a key MaxText
    does not have is a ValueError naming it) or 'report' (listed in ``Loaded.ignored`` as not understood)."""
    r = Reader(data, label)
    base = K.BASE
    o: dict[str, Any] = {}
    not_priced: list[str] = []

    block = r.str("decoder_block", base["decoder_block"])
    if block in REFUSED:
        raise r.fail("decoder_block", f"{REFUSED[block]}; supported: {', '.join(SUPPORTED)}", block)
    if block not in BLOCKS:
        raise r.fail("decoder_block", f"unknown decoder block; supported: {', '.join(SUPPORTED)}", block)
    spec = BLOCKS[block]
    name = r.str("model_name", base["model_name"], record=False)
    if name != base["model_name"]:
        o["model_name"] = name
    for key, (is_off, what) in K.UNPRICED.items():
        if r.has(key) and not is_off(r.data[key]):
            raise r.fail(key, f"{what} changes FLOPs and is not priced by maxflops")
        r.ignore(key, NO_EFFECT + " (off)")

    # --- widths ---------------------------------------------------------------------------------------------
    scales = _scales(r)
    experts = r.int("num_experts", base["num_experts"], minimum=1, record=False)
    for key, base_key, which in DERIVED:
        if key == "moe_mlp_dim" and experts == 1:
            o[key] = -1
            continue
        if derive or not r.has(key):
            value = r.int(base_key, base[base_key], minimum=None)
            o[key] = value << scales[which] if value > 0 else value
            if r.has(key):
                r.ignore(key, f"superseded: MaxText derives it from {base_key}")
        else:
            o[key] = r.int(key, minimum=None)
            r.ignore(base_key, f"superseded: {key} is given (MaxText derived it from {base_key})")
    for key in ("emb_dim", "num_query_heads", "num_kv_heads", "mlp_dim", "num_decoder_layers"):
        if o[key] < 1:
            raise r.fail(key if r.has(key) else dict((d, b) for d, b, _ in DERIVED)[key], "must be positive",
                         o[key])
    if spec.layer_pairs:
        o["num_decoder_layers"] *= 2
    o["vocab_size"] = r.int("vocab_size", base["vocab_size"], minimum=1)
    acts = r.list("mlp_activations", str, base["mlp_activations"])
    if not 1 <= len(acts) <= 2:
        raise r.fail("mlp_activations", "give one activation (plain FFN) or two (gated FFN)", acts)
    o["mlp_activations"] = tuple(acts)

    # --- MoE ------------------------------------------------------------------------------------------------
    moe_dim = o.pop("moe_mlp_dim")
    o["num_experts"] = r.int("num_experts", base["num_experts"], minimum=1, record=False)
    structure = (("first_num_dense_layers", spec.dense_prefix), ("interleave_moe_layer_step", spec.interleave),
                 ("shared_experts", spec.shared))
    if o["num_experts"] > 1:
        if moe_dim <= 0:
            raise r.fail("base_moe_mlp_dim" if derive or not r.has("moe_mlp_dim") else "moe_mlp_dim",
                         "must be positive for a MoE model (num_experts > 1), as MaxText requires (base.yml "
                         "default: -1)")
        o["moe_mlp_dim"] = moe_dim
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", base["num_experts_per_tok"], minimum=1)
        for key, read in structure:
            if read:
                o[key] = r.int(key, base[key], record=False)
            else:
                r.ignore(key, f"unused: decoder_block {block!r} does not read it")
    else:
        for key in ("base_moe_mlp_dim", "moe_mlp_dim", "num_experts_per_tok", *(k for k, _ in structure)):
            r.ignore(key, "unused: num_experts is 1 (no MoE layers)")

    # --- attention ------------------------------------------------------------------------------------------
    attention_type = r.str("attention_type", base["attention_type"], record=False)
    if spec.compressed:
        if attention_type != "compressed":
            raise r.fail("attention_type", f"decoder_block {block!r} runs 'compressed' attention", attention_type)
    elif attention_type not in ("global", "full", "mla"):
        raise r.fail("attention_type", "supported: 'global', 'full' or 'mla' (other MaxText attention types are "
                                       "set per layer by the decoder block, or are not priced)")
    o["attention_type"] = attention_type if attention_type in ("mla", "compressed") else "global"
    if spec.compressed:
        _compressed(r, o)
    elif o["attention_type"] == "mla":
        for key in MLA:
            o[key] = r.int(key, base[key])
        r.ignore("head_dim", "unused: MLA widths come from qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
    else:
        o["head_dim"] = r.int("head_dim", base["head_dim"], minimum=1)
        for key in MLA:
            r.ignore(key, "unused: attention_type is not 'mla'")

    def indexer_value(new, old, getter, **kw):
        if r.has(new) and r.has(old):
            a, b = getter(new), getter(old)
            if a != b:
                raise r.fail(old, f"disagrees with {new}={a!r}", b)
            r.ignore(old, f"superseded: same as {new}")
            return a
        return getter(old if r.has(old) else new, base[new], **kw)

    if indexer_value("use_indexer", "use_sparse_indexer", r.bool, record=False):
        o["use_sparse_indexer"] = True
        for new, old, key in INDEXER[1:]:
            o[key] = indexer_value(new, old, lambda k, *a, **kw: r.int(k, *a, minimum=1, **kw))
        o["indexer_loss_scaling_factor"] = r.float("indexer_loss_scaling_factor",
                                                   base["indexer_loss_scaling_factor"], record=False)
    else:
        for new, old, _ in INDEXER[1:]:
            for k in (new, old):
                r.ignore(k, "unused: the indexer is off (use_indexer false)")
        r.ignore("indexer_loss_scaling_factor", "unused: the indexer is off (use_indexer false)")

    pattern = o.get("attention_layer_pattern") or _pattern(r, block, spec, r.data.get("model_name") or name_hint)
    o["attention_layer_pattern"] = pattern
    if any(ch in pattern for ch in "LSH"):
        o["sliding_window_size"] = r.int("sliding_window_size", base["sliding_window_size"], minimum=1)
    else:
        r.ignore("sliding_window_size", f"unused: decoder_block {block!r} has no sliding-window layers")
    if "C" in pattern:
        o["chunk_attn_window_size"] = r.int("chunk_attn_window_size", base["chunk_attn_window_size"], minimum=0)
        if o["chunk_attn_window_size"] < 1:
            raise r.fail("chunk_attn_window_size", f"decoder_block {block!r} runs chunked attention on its RoPE "
                                                   "layers; set chunk_attn_window_size >= 1")
    else:
        r.ignore("chunk_attn_window_size", f"unused: decoder_block {block!r} has no chunked layers")
    if "D" in pattern:
        for key in GDN:
            o[key] = r.int(key, base[key], minimum=1)
    else:
        for key in GDN:
            r.ignore(key, f"unused: decoder_block {block!r} has no gated-delta-net layers")
    if spec.gated:  # the q projection also emits a per-head output gate; the shared experts have a sigmoid gate
        o["attention_output_gate"] = True
        o["shared_expert_gate"] = o.get("shared_experts", 0) > 0
    if spec.maxtext_quirks:
        o["convention_quirks"] = maxtext_quirks(block)

    # --- features not priced yet: an error when on ------------------------------------------------------------
    if spec.kv_sharing:
        o["num_kv_shared_layers"] = r.int("num_kv_shared_layers", base["num_kv_shared_layers"], record=False)
        o["double_wide_kv_shared_mlp"] = r.bool("use_double_wide_mlp", base["use_double_wide_mlp"], record=False)
        o["per_layer_input_dim"] = r.int("hidden_size_per_layer_input", base["hidden_size_per_layer_input"],
                                         record=False)
    if spec.compressed:
        o["mhc_expansion_rate"] = r.int("mhc_expansion_rate", base["mhc_expansion_rate"], minimum=1, record=False)
        o["mhc_hyper_head"] = o["mhc_expansion_rate"] > 1  # nnx_decoders: deepseek4 collapses streams by hc_head
    if r.has("first_num_hash_layers") and not spec.compressed:
        r.ignore("first_num_hash_layers", NO_EFFECT + ": hash-routed layers still run the router matmul (its "
                                          "scores weigh the experts); only the choice of experts comes from a "
                                          "token-id table")
    if spec.engram_mhc:
        engram = r.list("engram_layers", int, base["engram_layers"], none_ok=True, record=False) or []
        if engram:
            o["engram_layers"] = tuple(engram)
            for key in ("engram_num_heads", "engram_head_dim", "engram_max_ngram_size", "engram_kernel_size"):
                o[key] = r.int(key, base[key], minimum=1, record=False)
        o["mhc_expansion_rate"] = r.int("mhc_expansion_rate", base["mhc_expansion_rate"], minimum=1, record=False)
    _refuse_on(r, "engram_layers", "Engram layers", lambda v: v not in (None, [], ()))
    _refuse_on(r, "mhc_expansion_rate", "mHC hyper-connections (mhc_expansion_rate > 1)",
               lambda v: isinstance(v, int) and v > 1)
    if r.bool("use_multimodal", base["use_multimodal"], record=False):
        if spec.vision:
            o.update(VISION[spec.vision](r, o))
            if spec.vision == "llama4":  # every image is padded to 20 tiles, all encoded; MaxText counts one
                o["convention_quirks"] = tuple(o.get("convention_quirks", ())) + ("exact:vision_images=20",)
        else:
            not_priced.append("model: the vision encoder (use_multimodal); maxflops counts it for gemma3 and llama4 "
                              "only")
    if r.bool("use_audio", base["use_audio"], record=False):
        not_priced.append("model: the audio encoder (use_audio)")
    _refuse_on(r, "use_dpo", "DPO's reference-model forward pass (use_dpo)", bool)
    if spec.global_widths:
        o["global_head_dim"] = r.int("global_head_dim", base["global_head_dim"], record=False)
        o["global_num_kv_heads"] = r.int("global_num_kv_heads", base["global_num_kv_heads"], record=False)
        o["share_kv_projections"] = r.bool("share_kv_projections", base["share_kv_projections"], record=False)
    if spec.shared_width and o.get("shared_experts", 0) > 0:
        o["shared_expert_mlp_dim"] = o[spec.shared_width]
    for key, what in (("global_head_dim", "global-layer head widths"),
                      ("global_num_kv_heads", "global-layer KV heads"),
                      ("share_kv_projections", "shared K/V projections"),
                      ("num_kv_shared_layers", "KV-shared layers"),
                      ("use_double_wide_mlp", "double-wide MLP layers"),
                      ("hidden_size_per_layer_input", "per-layer embeddings"),
                      ("o_groups", "grouped output projection"), ("o_lora_rank", "low-rank output projection"),
                      ("compress_ratios", "compressed attention")):
        _refuse_on(r, key, what, lambda v: v not in (None, 0, False, [], ()))
    if spec.latent_ffn:
        width = r.int("attention_output_dim", base["attention_output_dim"], minimum=None, record=False)
        moe_in = r.int("moe_expert_input_dim", base["moe_expert_input_dim"], minimum=None, record=False)
        if width <= 0 or moe_in != width:
            raise r.fail("moe_expert_input_dim", f"must equal attention_output_dim={width} > 0 for decoder_block "
                                                 f"{block!r} (MaxText's rule)", moe_in)
        if width != o["emb_dim"]:
            o["attention_output_dim"] = width
    for key in ("attention_output_dim", "moe_expert_input_dim"):
        _refuse_on(r, key, f"{key} (qwen3_custom_moe widths)", lambda v: isinstance(v, int) and v > 0)

    # --- MTP and the step ---------------------------------------------------------------------------------------
    # A model YAML runs with base.yml's step (as MaxText would run it): the absent step keys take base.yml's
    # values, listed in Loaded.defaults; a trainer's object carries every key.
    o["mtp_num_layers"] = r.int("mtp_num_layers", base["mtp_num_layers"], record=derive)
    o["per_device_batch_size"] = r.float("per_device_batch_size", base["per_device_batch_size"], record=derive)
    for key in ("max_target_length", "gradient_accumulation_steps"):
        o[key] = r.int(key, base[key], minimum=1, record=derive)

    # --- the program: implementation keys -> hardware knobs -----------------------------------------------------
    _implementation(r, o, not_priced, spec)
    # storage MaxText quantizes (AQT / Transformer Engine): FLOPs do not move, decode bytes would
    quant, kv_quant = r.data.get("quantization"), r.data.get("quantize_kvcache")
    if quant:
        not_priced.append(f"traffic: MaxText's quantization={quant!r}; decode weight bytes are priced at "
                          f"weight_bytes={o.get('weight_bytes', 2)} (set weight_bytes_rules for the stored sizes)")
    if kv_quant:
        dtype = r.data.get("kv_quant_dtype", "int8")
        not_priced.append(f"traffic: MaxText's quantize_kvcache (kv_quant_dtype={dtype!r}); the KV cache is priced "
                          f"at kv_cache_bytes={o.get('kv_cache_bytes', 2)}")
    if not_priced:
        o["not_priced"] = tuple(not_priced)

    if report:
        r.finish(classify)
        refuse_unknown(label, data, r.ignored, K.MODEL_KEYS | K.IMPLEMENTATION_KEYS | K.NO_EFFECT, unknown)
    validate_overrides(label, o, source_key)
    return Loaded(overrides=o, source="maxtext", ignored=r.ignored, defaults=r.defaults)


def _gemma3_vision(r: Reader, o: dict) -> dict:
    """Gemma 3's SigLIP tower (its sizes are fixed in MaxText's gemma3.py): 14-pixel patches, 27 layers of width
    1152 and MLP 4304, then average pooling by 4 x 4 and one projection to the decoder width."""
    side = r.int("image_size_for_vit", K.BASE["image_size_for_vit"], minimum=14, record=False) // 14
    channels = r.int("num_channels_for_vit", K.BASE["num_channels_for_vit"], minimum=1, record=False)
    return {"vision_layers": 27, "vision_hidden_dim": 1152, "vision_mlp_dim": 4304, "vision_patches": side * side,
            "vision_patch_dim": channels * 14 * 14, "vision_frozen": _frozen(r),
            "vision_projector": (f"{(side // 4) ** 2}:1152:{o['emb_dim']}",)}


def _llama4_vision(r: Reader, o: dict) -> dict:
    """Llama 4's tower per tile: patches plus a class token through the encoder, a pixel shuffle (ratio^2 of the
    patches, each ratio^-2 wider), its two-layer MLP, and the projector to base_emb_dim. The processor pads every
    image to 20 tiles, all encoded ('exact:vision_images=20'); MaxText's function counts one tile."""
    get = lambda key: r.int(key, K.BASE[key], minimum=1, record=False)
    patch = get("patch_size_for_vit")
    patches = (get("tile_size_for_vit") // patch) ** 2
    ratio = r.float("pixel_shuffle_ratio_for_vit", K.BASE["pixel_shuffle_ratio_for_vit"], record=False)
    shuffled = patches * ratio ** 2
    if not shuffled.is_integer():
        raise r.fail("pixel_shuffle_ratio_for_vit", f"gives {shuffled} pixel-shuffled tokens for {patches} patches")
    tokens, mlp = int(shuffled), get("intermediate_size_for_vit")
    fc1, fc2 = get("projector_input_dim_for_vit"), get("projector_output_dim_for_vit")
    base_emb = r.int("base_emb_dim", K.BASE["base_emb_dim"], minimum=1, record=False)
    return {"vision_layers": get("num_hidden_layers_for_vit"), "vision_hidden_dim": get("hidden_size_for_vit"),
            "vision_mlp_dim": mlp, "vision_patches": patches, "vision_extra_tokens": 1,
            "vision_patch_dim": get("num_channels_for_vit") * patch * patch, "vision_frozen": _frozen(r),
            "vision_encoder_stages": (f"{tokens}:{mlp}:{fc1}", f"{tokens}:{fc1}:{fc2}"),
            "vision_projector": (f"{tokens}:{fc1}:{base_emb}",)}


def _frozen(r: Reader) -> bool:
    return r.bool("freeze_vision_encoder_params", K.BASE["freeze_vision_encoder_params"], record=False)


VISION = {"gemma3": _gemma3_vision, "llama4": _llama4_vision}


def _refuse_on(r: Reader, key: str, what: str, is_on) -> None:
    if r.has(key) and key not in r.used:
        if is_on(r.data[key]):
            raise r.fail(key, f"{what} changes FLOPs and is not priced by maxflops yet")
        r.ignore(key, NO_EFFECT + " (off)")


def _compressed(r: Reader, o: dict) -> None:
    """DeepSeek-V4's attention keys: widths, the grouped low-rank output, and compress_ratios -> one pattern letter
    per layer (0 'L' sliding window; 4 'S' compressed sparse, the ratio attention_compressed.py gives the
    overlapping compressor and the indexer; above 4 'H' heavily compressed)."""
    base = K.BASE
    o["head_dim"] = r.int("head_dim", base["head_dim"], minimum=1)
    o["q_lora_rank"] = r.int("q_lora_rank", base["q_lora_rank"], minimum=1)
    o["o_groups"] = r.int("o_groups", base["o_groups"], minimum=1)
    o["o_lora_rank"] = r.int("o_lora_rank", base["o_lora_rank"], minimum=1)
    r.ignore("qk_rope_head_dim", NO_EFFECT + ": the RoPE share of head_dim")
    for key in ("kv_lora_rank", "qk_nope_head_dim", "v_head_dim"):
        r.ignore(key, "unused: compressed attention's widths are head_dim and q_lora_rank")
    ratios = r.list("compress_ratios", int, base["compress_ratios"])
    layers = o["num_decoder_layers"]
    if r.bool("scan_layers", base["scan_layers"], record=False):
        # nnx_decoders: the first first_num_hash_layers layers as listed, then scanned blocks of an HCA layer of
        # ratio 128 and a CSA layer of ratio 4 (compress_ratios past the prefix is not read)
        prefix = r.int("first_num_hash_layers", base["first_num_hash_layers"], minimum=0, record=False)
        rest = layers - prefix
        if len(ratios) < prefix or rest < 0 or rest % 2:
            raise r.fail("compress_ratios", f"MaxText's scanned deepseek4 builds the first first_num_hash_layers="
                                            f"{prefix} layers as listed and the other {max(rest, 0)} in (128, 4) "
                                            "pairs, which these do not make (or set scan_layers=False)", ratios)
        built = list(ratios[:prefix]) + [128, 4] * (rest // 2)
        if len(ratios) == layers and list(ratios) != built:
            raise r.fail("compress_ratios", f"MaxText's scanned deepseek4 builds {built} (its first "
                                            f"first_num_hash_layers={prefix} layers as listed, then (128, 4) "
                                            "pairs), not this list; set scan_layers=False to build it as listed",
                         ratios)
        ratios = built
        o["remat_skip_layers"] = prefix  # the prefix runs unrolled, outside the rematerialized scan
        o["remat_block_layers"] = 2  # each scanned (HCA, CSA) block is rematerialized as one unit
    elif len(ratios) != layers:
        raise r.fail("compress_ratios", f"has {len(ratios)} entries for num_decoder_layers={layers}: give one "
                                        "ratio per layer", ratios)
    if r.int("mtp_num_layers", base["mtp_num_layers"], record=False):
        raise r.fail("mtp_num_layers", "MaxText refuses MTP for decoder_block 'deepseek4'",
                     r.data.get("mtp_num_layers"))
    letters, hca = [], set()
    for i, m in enumerate(ratios):
        if m == 0:
            letters.append("L")
        elif m == 4:
            letters.append("S")
        elif m > 4:
            letters.append("H")
            hca.add(m)
        else:
            raise r.fail("compress_ratios", f"entry {i} is {m}: a ratio is 0 (sliding window) or at least 4 "
                                            "(4 compressed sparse, above 4 heavily compressed)", ratios)
    if len(hca) > 1:
        raise r.fail("compress_ratios", f"has heavily compressed layers of ratios {sorted(hca)}: maxflops prices "
                                        "one HCA ratio per model", ratios)
    o["attention_layer_pattern"] = "".join(letters)
    o["csa_compress_ratio"] = 4
    if hca:
        o["hca_compress_ratio"] = hca.pop()


def _pattern(r: Reader, block: str, spec: Block, model_name: str) -> str:
    cycle = "no FLOPs effect: scan grouping of the layer cycle"
    if spec.pattern_from == "nope_layer_interval":
        # llama4.py: layer l is NoPE (global) iff nope_layer_interval > 0 and (l+1) % interval == 0; the RoPE
        # layers run chunked attention.
        interval = r.int("nope_layer_interval", K.BASE["nope_layer_interval"], minimum=None, record=False)
        return "C" * (interval - 1) + "G" if interval > 0 else "C"
    if spec.pattern_from == "inhomogeneous_layer_cycle_interval":
        # decoders.py / qwen3.py: layer l is full attention iff (l+1) % inhomogeneous_layer_cycle_interval == 0,
        # the others gated-delta-net linear attention.
        interval = r.int("inhomogeneous_layer_cycle_interval", K.BASE["inhomogeneous_layer_cycle_interval"],
                         minimum=1, record=False)
        r.ignore("nope_layer_interval", "unused: only the llama4 decoder block reads it")
        return "D" * (interval - 1) + "G"
    if not spec.cycle_remat:
        r.ignore("inhomogeneous_layer_cycle_interval", cycle)
    r.ignore("nope_layer_interval", "unused: only the llama4 decoder block reads it")
    return dict(spec.pattern_by_model).get(model_name, spec.pattern)


# The rule set priced besides the defaults: the residual stream whole over every mesh axis (Megatron's tensor
# parallelism), as a list of rules per logical name. (MaxText merges a config's rules into base.yml's by name.)
RESIDUAL_WHOLE = {name: [()] for name in ("activation_embed", "activation_embed_attn", "activation_embed_moe")}
# ... and K/V heads whole over every axis (Megatron's GQA with fewer KV heads than tensor ranks), with either.
KV_WHOLE = {name: [()] for name in ("kv_heads", "activation_kv_heads")}


def _changed_rules(rules, default) -> dict:
    """The logical names whose rules differ from ``default``, with their rules (each a sorted tuple of mesh axes):
    flax resolves each logical name by its own rules, in order, so the order of different names does not matter, and
    a rule shards a dimension over the product of its axes, whatever their order (MaxText itself moves 'stage' to
    the front of activation_embed_and_logits_batch when it pipelines)."""
    def by_name(table):
        out: dict = {}
        for name, axes in table:
            out.setdefault(name, []).append((axes,) if isinstance(axes, str) else tuple(sorted(axes)))
        return out
    mine, base = by_name(rules), by_name(default)
    return {n: mine.get(n, []) for n in mine.keys() | base.keys() if mine.get(n) != base.get(n)}


def _mesh(r: Reader, o: dict, not_priced: list, spec: Block) -> None:
    """The device mesh -> num_devices and batch_shards: the product of the mesh axes MaxText's activation_batch rule
    shards the batch over (each axis ici x dcn; a -1 filled so that the axes multiply to the devices of a slice,
    or to the slices), so that a batch that does not fill them is padded as the program pads it."""
    base = K.BASE
    devices = r.int("num_target_devices", base["num_target_devices"], minimum=1, record=False)
    keys = ("mesh_axes", "ici_parallelism", "dcn_parallelism", "num_slices", "logical_axis_rules",
            "moe_dispatch_no_expert_sharding") + PIPELINE_KEYS
    if devices == 1:
        for key in keys:
            r.ignore(key, "unused: one device")
        return
    axes = r.list("mesh_axes", str, base["mesh_axes"], record=False)
    slices = r.int("num_slices", base["num_slices"], minimum=1, record=False)
    sizes = dict(zip(axes, [1] * len(axes)))
    for key, total in (("ici_parallelism", devices // slices), ("dcn_parallelism", slices)):
        dims = r.list(key, int, base[key], record=False)
        if len(dims) != len(axes):
            raise r.fail(key, f"{len(dims)} entries for the {len(axes)} mesh_axes {axes}")
        known = 1
        for d in dims:
            known *= d if d != -1 else 1
        if dims.count(-1) > 1 or total % known:
            raise r.fail(key, f"does not multiply to {total} (num_target_devices={devices}, num_slices={slices})")
        for a, d in zip(axes, dims):
            sizes[a] *= total // known if d == -1 else d
    rules = r.raw("logical_axis_rules", base["logical_axis_rules"], record=False)
    changed = _changed_rules(rules, base["logical_axis_rules"])
    if changed.items() >= KV_WHOLE.items() and o["num_experts"] <= 1:
        # K/V heads whole over `tensor`: measured on dense models, XLA still splits the K/V projections (with MoE,
        # the one program measured splits the router's backward otherwise: not priced)
        rest = {n: v for n, v in changed.items() if n not in KV_WHOLE}
        changed = rest if rest in ({}, RESIDUAL_WHOLE) else changed
    if changed == RESIDUAL_WHOLE:
        # Megatron-style: the residual stream whole over `tensor`. Measured (tests/fixtures/maxtext_sharded): every
        # matmul still splits over a tensor-sharded dimension (heads, MLP, experts' hidden, vocabulary; MLA's down
        # projections too), but the MoE router, the capacity dispatch and combine and the dense path's weighted
        # sum have none, and run whole on every tensor rank.
        o["moe_routing_replicas"] = sizes.get("tensor", 1)
    elif changed:
        not_priced.append(f"hardware: logical_axis_rules other than MaxText 0.2.5's defaults for {sorted(changed)} "
                          "(priced as the default rules shard it: a matmul a rule leaves replicated over a mesh axis "
                          "runs on every device of the axis)")
    batch_axes = next((names for name, names in rules if name == "activation_batch"), None)
    if batch_axes is None:
        raise r.fail("logical_axis_rules", "no activation_batch rule (the mesh axes the batch is sharded over)")
    batch_axes = [batch_axes] if isinstance(batch_axes, str) else batch_axes
    shards = 1
    for a in batch_axes:
        shards *= sizes.get(a, 1)
    o["num_devices"], o["batch_shards"] = devices, shards
    _pipeline(r, o, sizes.get("stage", 1), spec)
    peeled = r.bool("moe_dispatch_no_expert_sharding", base["moe_dispatch_no_expert_sharding"], record=False)
    if peeled and sizes.get("expert", 1) > 1 and o.get("moe_impl") == "capacity":
        # Measured (tests/fixtures/maxtext_sharded): the forward is the ideal share, but the partitioned backward
        # computes the experts' down-projection input gradient whole on every batch shard of an expert shard, for
        # every mesh tried (data, fsdp, tensor with expert; remat full and minimal; other E, k, capacity, length).
        replicas = 1
        for a in batch_axes:
            replicas *= sizes.get(a, 1) if a != "expert" else 1
        o["moe_down_grad_replicas"] = replicas


PIPELINE_KEYS = ("num_layers_per_pipeline_stage", "num_pipeline_microbatches", "num_pipeline_repeats",
                 "pipeline_parallel_layers", "pipeline_delay_activation_forwarding")


def _pipeline(r: Reader, o: dict, stages: int, spec: Block) -> None:
    """The mesh's stage axis -> the pipeline knobs, MaxText's -1 defaults filled as its config does: every decoder
    layer pipelined (deepseek: its MoE layers, the last ones), repeats = pipelined layers / (stages x layers per
    stage), microbatches = stages (twice that with pipeline_delay_activation_forwarding)."""
    if stages == 1:
        for key in PIPELINE_KEYS:
            r.ignore(key, "unused: no pipeline stages")
        return
    base, n = K.BASE, o["num_decoder_layers"]
    first = o.get("first_num_dense_layers", 0) if spec.dense_prefix else 0
    # (base.yml's -1; MaxText's resolved config holds the number it stands for)
    piped = r.int("pipeline_parallel_layers", -1, minimum=-1, record=False)
    piped = n - first if piped == -1 else piped
    if not 0 < piped <= n - first:
        raise r.fail("pipeline_parallel_layers", f"pipelines {piped} of the {n - first} decoder layers it can")
    per_stage = r.int("num_layers_per_pipeline_stage", base["num_layers_per_pipeline_stage"], minimum=1, record=False)
    repeats = r.int("num_pipeline_repeats", base["num_pipeline_repeats"], minimum=-1, record=False)
    if repeats == -1:
        repeats = piped // (stages * per_stage)
    if repeats < 1 or stages * per_stage * repeats != piped:
        raise r.fail("num_pipeline_repeats", f"{repeats}: stages ({stages}) x layers per stage ({per_stage}) x "
                     f"repeats must be the {piped} pipelined layers")
    delay = r.bool("pipeline_delay_activation_forwarding", base["pipeline_delay_activation_forwarding"],
                   record=False)
    micro = r.int("num_pipeline_microbatches", base["num_pipeline_microbatches"], minimum=-1, record=False)
    if micro == 0:
        raise r.fail("num_pipeline_microbatches", "0 microbatches (MaxText: -1 for one per stage, or a positive number)")
    o["pipeline_stages"], o["pipeline_repeats"], o["pipeline_delay"] = stages, repeats, delay
    o["pipeline_microbatches"] = (2 if delay else 1) * stages if micro == -1 else micro
    if piped != n:  # deepseek pipelines its last MoE layers; the others their first layers
        o["pipeline_layers"] = tuple(range(n - piped, n)) if spec.dense_prefix else tuple(range(piped))


def _warmup_loops(o: dict, scanned: bool, not_priced: list) -> None:
    """The DSA warm-up's layers outside a loop. MaxText's deepseek decoder scans its dense prefix and its MoE layers
    as two groups; XLA unrolls a group of one layer. Measured (tests/fixtures/maxtext_programs): a layer scanned
    alone has its recompute merged with its forward (warmup_cse_layers), and an unrolled last layer loses the work
    no loss reads (warmup_dead_last_layer); an unscanned program keeps each layer's recompute."""
    n, first = o["num_decoder_layers"], o.get("first_num_dense_layers", 0)
    if o["attention_type"] != "mla":
        if not scanned or 1 in (first, n - first):
            not_priced.append("hardware: the DSA warm-up stage of compressed attention without scanned groups of "
                              "two or more layers (XLA then drops the last layer's unread work and merges its "
                              "recompute; priced as a scanned program)")
        return
    if not scanned:
        o["warmup_dead_last_layer"] = True
        return
    alone = [start for start, size in ((0, first), (first, n - first)) if size == 1]
    o["warmup_cse_layers"] = tuple(alone)
    o["warmup_dead_last_layer"] = n - 1 in alone


def _implementation(r: Reader, o: dict, not_priced: list, spec: Block) -> None:
    """Implementation keys -> hardware knobs. What maxflops cannot price yet goes to ``not_priced``."""
    base = K.BASE
    if spec.qkv_norms in ("key", "key_rope"):
        normed = r.bool("use_qk_norm", base["use_qk_norm"], record=False)
        o["qkv_norms"] = ("qk" if spec.qkv_norms == "key" else "qk_rope") if normed else "none"
    elif spec.qkv_norms:
        o["qkv_norms"] = spec.qkv_norms
    if spec.post_ffn_norm == "always":
        o["post_ffn_norm"] = True
    elif spec.post_ffn_norm == "key":
        o["post_ffn_norm"] = r.bool("use_post_ffw_norm", base["use_post_ffw_norm"], record=False)
    attention = r.str("attention", base["attention"], record=False)
    if attention == "dot_product":
        o["attention_impl"] = "dense"
        if o.get("use_sparse_indexer"):
            o["dsa_impl"] = "dense"
    elif attention == "flash":
        o["attention_impl"] = "blocked"
        o["attention_block_q"] = r.int("sa_block_q", base["sa_block_q"], minimum=1, record=False)
        o["attention_block_kv"] = r.int("sa_block_kv", base["sa_block_kv"], minimum=1, record=False)
        o["flash_backward_recompute"] = True
        # jax's splash runs the backward as a dq kernel and a dkv kernel unless fused; tokamax's splash always fuses
        tokamax_splash = r.bool("use_tokamax_splash", base["use_tokamax_splash"], record=False)
        fused = tokamax_splash or r.bool("sa_use_fused_bwd_kernel", base["sa_use_fused_bwd_kernel"], record=False)
        o["flash_backward_split"] = not fused
        bwd_tiles = {k: r.int(k, base[k], minimum=1, record=False)
                     for k in ("sa_block_q_dkv", "sa_block_kv_dkv") + (() if fused else ("sa_block_q_dq",
                                                                                       "sa_block_kv_dq"))}
        differ = {k: v for k, v in bwd_tiles.items()
                  if v != o["attention_block_q" if "_q_" in k else "attention_block_kv"]}
        if differ:
            not_priced.append("hardware: the splash backward's own tiles (" + ", ".join(
                f"{k}={v}" for k, v in differ.items()) + ") are priced as the forward's "
                f"{o['attention_block_q']}x{o['attention_block_kv']}")
        if o.get("use_sparse_indexer") and o["attention_type"] == "mla":
            # tokamax's dynamic-mask splash over the top-k mask: the tiles holding a selected key
            o["dsa_impl"] = "blocked"
            not_priced.append("hardware: the DSA top-k mask's splash tiles are priced as every causally visible tile "
                              "(an upper bound on the attention: the kernel skips tiles where no query of the tile "
                              "selected a key; the program counter's splash_mask='causal' assumes the same)")
        elif o.get("use_sparse_indexer"):
            not_priced.append("hardware: attention='flash' with compressed attention's top-k mask (priced as the "
                              "ideal attended blocks)")
    else:
        not_priced.append(f"hardware: attention={attention!r} picks its kernel on the device (priced as the ideal "
                          "attended pairs)")
    if o["num_experts"] > 1:
        cf = r.float("capacity_factor", base["capacity_factor"], record=False)
        sparse = r.bool("sparse_matmul", base["sparse_matmul"], record=False)
        if sparse:  # grouped (ragged) matmuls over the routed tokens, their outputs summed by an einsum
            o["moe_dispatch"] = "einsum"
            if cf > 0:
                not_priced.append(f"hardware: capacity_factor={cf} with sparse_matmul (priced dropless)")
        elif cf > 0:
            o.update(moe_impl="capacity", capacity_factor=cf, capacity_rule="maxtext", moe_dispatch="einsum")
        else:
            o["moe_impl"], o["moe_dispatch"] = "dense", "einsum"
    else:
        for key in ("capacity_factor", "sparse_matmul", "megablox"):
            r.ignore(key, "unused: no MoE layers")
    remat = r.str("remat_policy", base["remat_policy"], record=False)
    scanned = r.bool("scan_layers", base["scan_layers"], record=False)
    if spec.cycle_remat:  # llama4.py: a scanned block holds a layer cycle and is rematerialized whole
        cycle = r.int("inhomogeneous_layer_cycle_interval", base["inhomogeneous_layer_cycle_interval"], minimum=1,
                      record=False)
        if scanned:
            o["remat_block_layers"] = cycle
            if spec.block_pattern:  # the scannable block builds layer i of the block as the pattern's letter i
                o["attention_layer_pattern"] = "".join(spec.pattern[i % len(spec.pattern)] for i in range(cycle))
            steps = [("interleave_moe_layer_step", o.get("interleave_moe_layer_step", 1))]
            if spec.pattern_from == "nope_layer_interval":
                steps.append(("nope_layer_interval", max(len(o["attention_layer_pattern"]), 1)))
            for key, step in steps:
                if cycle % step:
                    raise r.fail("inhomogeneous_layer_cycle_interval", "MaxText's scanned decoder picks each "
                                 "layer's kind by its place in a block of this many layers, so "
                                 f"{key}={step} must divide it (else its layers are not the ones the keys describe); "
                                 "set a multiple, or scan_layers=False", cycle)
    if spec.router_on_input:  # moe.py: the sigmoid router scores scale the tokens entering the experts
        o["moe_router_scale"] = "input"
    # named policies are checked against MaxText's programs for GQA, MLA and DSA layers with a dense or MoE FFN
    plain = o["attention_type"] in ("global", "mla")
    if remat == "none" and not scanned:
        o["remat_policy"] = "none"  # the unscanned decoder applies no checkpoint at all
    elif remat in REMAT_SIMPLE:
        o["remat_policy"] = REMAT_SIMPLE[remat]
    elif remat in SCHEMA_REMAT and plain:
        o["remat_policy"] = remat
    else:
        not_priced.append(f"hardware: remat_policy={remat!r} (priced without rematerialization)")
    _mesh(r, o, not_priced, spec)
    o["remat_mtp"] = False  # MaxText's MTP modules are not rematerialized
    o["outer_product_grads"] = "elementwise"  # its compiled (optimized) step has no contraction-free dots
    o["packed_kernel"] = "row"  # packed rows go through every layer whole; segment ids only mask attention
    if r.str("hardware", base["hardware"], record=False) == "cpu":
        o["conv_weight_grad"] = "dense"  # XLA on CPU rewrites the depthwise conv's batch-grouped weight gradient
    if "D" in o["attention_layer_pattern"]:
        o["gdn_impl"], o["gdn_chunk_size"] = "chunked", r.int("gdn_chunk_size", base["gdn_chunk_size"], minimum=1,
                                                              record=False)
        o["gdn_conv_impl"] = "pre_padded"  # qwen3.py pads the sequence, then convolves without padding
    else:
        r.ignore("gdn_chunk_size", "unused: no gated-delta-net layers")
    if o.get("use_sparse_indexer"):
        if o["attention_type"] == "mla":
            o["indexer_skip_short"] = True  # attention_mla: no indexer when the keys fit in the top-k
            o["indexer_impl"] = "dense"  # its scores and the KL loss's target: einsums over the full square
        if not r.bool("indexer_sparse_training", base["indexer_sparse_training"], record=False):
            # train.py: the dense warm-up stage drops the LM loss and the output head and trains only the indexer
            # through its KL loss. base.yml's default (no KL loss) trains nothing: the compiled step has no matmul.
            # That is a run nobody means, so a model's YAML keeps the training FLOPs a user asks for, and says so.
            if not o.get("indexer_loss_scaling_factor"):
                not_priced.append("hardware: indexer_sparse_training=False with no indexer KL loss (MaxText's "
                                  "default): its train step trains nothing and runs no matmul; priced as the "
                                  "sparse training stage (set indexer_stage='warmup' for the step as it runs)")
            else:
                o["indexer_stage"] = "warmup"
            if o.get("indexer_stage") == "warmup" and o.get("mtp_num_layers"):
                not_priced.append("hardware: MTP modules in the DSA warm-up stage (MaxText still adds their loss, so "
                                  "the whole model gets gradients; priced as the warm-up's frozen model)")
            if o.get("indexer_stage") == "warmup":
                _warmup_loops(o, scanned, not_priced)
    else:
        r.ignore("indexer_sparse_training", "unused: the indexer is off")
    for key in ("megablox", "sa_block_q", "sa_block_kv", "use_mla_absorbed_mqa"):
        if key not in r.used:
            r.ignore(key, NO_EFFECT + " on the counted program")
