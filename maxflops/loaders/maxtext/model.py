"""The model's MaxText keys -> schema overrides: what the network is (decoder block, widths, MoE, attention and its
layer pattern, the features around the layers, the step's batch and length), read in the steps ``map_keys``
(``mapping``) runs in order. The program's keys (kernels, remat, mesh) are ``program``'s.

What each decoder block is made of lives in ``BLOCKS`` (data, not branches): its fixed attention pattern or the
key that derives it, whether its layers are pairs (gemma2), which MoE-structure keys its code reads, its gates,
and where MaxText's own FLOPs function counts it differently from its code (``maxtext_quirks``, applied only
under ``convention='maxtext'``). With ``derive`` (a model YAML), the widths MaxText derives in ``pyconfig``
(``emb_dim`` from ``base_emb_dim`` and ``global_parameter_scale``, ...) are derived the same way (``DERIVED``);
otherwise the derived keys are read as they are (MaxText's FLOPs function and its model read those).
"""

from __future__ import annotations

import dataclasses

from ..reader import NO_EFFECT, Reader
from . import keys as K

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
# schema key -> the MaxText key that sets it, where the names differ (``base_emb_dim`` for ``emb_dim``,
# ``indexer_topk`` for ``index_topk``): named in errors about the schema key
SOURCES = {**{schema: base for schema, base, _ in DERIVED}, **{schema: name for name, _, schema in INDEXER}}

GDN = ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim", "gdn_conv_kernel_dim")
MLA = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


def maxtext_quirks(block: str) -> tuple:
    """The ``convention_quirks`` entries of a decoder block: where MaxText's FLOPs function counts it its own way
    (also carried by configs of that model from elsewhere: the Hugging Face loader, the shipped configs)."""
    return tuple(f"maxtext:{k}={v}" for k, v in BLOCKS[block].maxtext_quirks)


def _scales(r: Reader) -> tuple[int, int, int, int]:
    """pyconfig's get_individual_scales(global_parameter_scale): (emb, heads, mlp, layers) powers of two."""
    scale = r.int("global_parameter_scale", K.BASE["global_parameter_scale"], minimum=1, record=False)
    if scale & (scale - 1):
        raise r.fail("global_parameter_scale", "must be a power of two (MaxText's rule)")
    base, rem = divmod(scale.bit_length() - 1, 3)
    heads = base + int(rem > 0)
    return base + int(rem > 1), heads, heads, base


def read_block(r: Reader, o: dict) -> str:
    """The decoder block (refused if MaxText 0.2.5 has no such block) and the model's name."""
    base = K.BASE
    block = r.str("decoder_block", base["decoder_block"])
    if block in REFUSED:
        raise r.fail("decoder_block", f"{REFUSED[block]}; supported: {', '.join(SUPPORTED)}", block)
    if block not in BLOCKS:
        raise r.fail("decoder_block", f"unknown decoder block; supported: {', '.join(SUPPORTED)}", block)
    name = r.str("model_name", base["model_name"], record=False)
    if name != base["model_name"]:
        o["model_name"] = name
    return block


def read_widths(r: Reader, o: dict, spec: Block, derive: bool) -> None:
    """The widths, layers and vocabulary: derived from the ``base_*`` keys as pyconfig derives them (``derive``),
    else read as given; and the FFN's activations."""
    base = K.BASE
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
            raise r.fail(key if r.has(key) else SOURCES[key], "must be positive", o[key])
    if spec.layer_pairs:
        o["num_decoder_layers"] *= 2
    o["vocab_size"] = r.int("vocab_size", base["vocab_size"], minimum=1)
    o["logits_via_embedding"] = r.bool("logits_via_embedding", base["logits_via_embedding"])
    # a learned position table of trainable_position_size rows when positive (MaxText's position_embedder)
    o["position_table_rows"] = max(0, r.int("trainable_position_size", base["trainable_position_size"], minimum=None))
    acts = r.list("mlp_activations", str, base["mlp_activations"])
    if not 1 <= len(acts) <= 2:
        raise r.fail("mlp_activations", "give one activation (plain FFN) or two (gated FFN)", acts)
    o["mlp_activations"] = tuple(acts)


def read_moe(r: Reader, o: dict, block: str, spec: Block, derive: bool) -> None:
    """The experts: their width and count, top-k, and the structure keys (dense prefix, interleave, shared
    experts) the block's code reads."""
    base = K.BASE
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


def read_attention(r: Reader, o: dict, block: str, spec: Block, name_hint: str) -> None:
    """The attention: its type and widths (GQA, MLA, DeepSeek-V4's compressed), the DeepSeek sparse indexer, and
    the layer pattern with the widths of its layer kinds (windows, chunks, gated-delta-net layers)."""
    base = K.BASE
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
    _indexer(r, o)
    _layers(r, o, block, spec, name_hint)


def _indexer(r: Reader, o: dict) -> None:
    """DeepSeek's sparse indexer: each key by its MaxText 0.2.5 name or the earlier one (both given: they must
    agree)."""
    base = K.BASE

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


def _layers(r: Reader, o: dict, block: str, spec: Block, name_hint: str) -> None:
    """The layer pattern (unless the attention type set it) and the keys of the layer kinds in it."""
    base = K.BASE
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


def read_features(r: Reader, o: dict, block: str, spec: Block, not_priced: list) -> None:
    """The features around and inside the layers (KV sharing and per-layer embeddings, mHC, Engram, the vision and
    audio encoders, DPO, global-layer widths, qwen3_custom_moe's latent widths): read where the block's code runs
    them; one switched on where the block's code does not run it, or where maxflops does not price it, is an error
    (an encoder maxflops does not count is noted in ``not_priced`` instead)."""
    base = K.BASE
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


def read_step(r: Reader, o: dict, derive: bool) -> None:
    """MTP and the step. A model YAML runs with base.yml's step (as MaxText would run it): the absent step keys take
    base.yml's values, listed in Loaded.defaults; a trainer's object carries every key."""
    base = K.BASE
    o["mtp_num_layers"] = r.int("mtp_num_layers", base["mtp_num_layers"], record=derive)
    o["per_device_batch_size"] = r.float("per_device_batch_size", base["per_device_batch_size"], record=derive)
    for key in ("max_target_length", "gradient_accumulation_steps"):
        o[key] = r.int(key, base[key], minimum=1, record=derive)


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

