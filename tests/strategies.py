"""Hypothesis strategies for tests/core/test_properties.py: random valid maxflops configs.

``config_kwargs(...)`` draws the keyword arguments of ``maxflops.model_config``: every mixer letter, GQA / MLA /
compressed attention, DSA with index reuse, dense and MoE FFNs, MTP, mHC, Engram, per-layer embeddings, vision,
the gated delta net, Mamba-2, layers with a mixer or an FFN alone, every hardware knob, every convention and (optionally) reporting knobs set one by one.
Widths are small and pairwise distinct, lengths short. Every key the schema has is drawn somewhere (see
``COVERED`` and ``NOT_DRAWN``; tests/core/test_properties.py checks the two cover ``SCHEMA``).
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from maxflops.conventions import CONVENTIONS, HARDWARE_BELOW_MODEL, bridge_refusal
from maxflops.schema import SCHEMA
from maxflops.families import FAMILIES
from maxflops.families.compressed import BUILT_WITH

SCHEMA_DEFAULTS = {k: f.default for k, f in SCHEMA.items()}

CONVENTION_NAMES = tuple(CONVENTIONS)

# The reporting knobs: the keys of the schema's "conventions" section that a convention bundle (or a model's
# convention_quirks) sets. Hardware FLOPs are documented not to depend on any of them.
REPORTING_KNOBS = (
    "causal_pairs", "window_pairs", "compressed_pairs", "indexer_proj_split", "window_scope", "dsa_pairs",
    "dsa_core_form", "indexer_flops", "indexer_pairs", "indexer_head_reduction", "indexer_skip_within_topk",
    "indexer_every_layer", "indexer_stage_in_model", "indexer_train_factor", "gdn_conv_taps", "gdn_core_state_ops",
    "gate_projections", "shared_expert_gate_flops", "ffn_all_moe", "mhc_flops", "mhc_head_flops",
    "mhc_outer_flops", "router_flops", "mtp_layer_numbering", "mtp_eh_proj", "mtp_logits", "mtp_norm_flops",
    "mla_norm_flops", "padded_vocab_in_model_flops", "mamba_scan_flops", "mamba_inner_width", "ssm_conv_flops", "packed_tokens",
    "mamba1_scan_flops", "kda_output_gate", "kda_core_state_ops", "gdp_core_flops", "compressed_norm_flops",
    "indexer_kl_flops", "mla_gate_flops", "attn_res_flops", "attention_flops", "embedding_flops", "logits_flops",
    "recompute_forwards", "recompute_attention_forwards",
)

# Knobs whose non-exact value changes the pair rule of a prefill (decode always counts the exact new-token keys).
PAIR_RULE_KNOBS = ("causal_pairs", "window_pairs", "dsa_pairs", "indexer_pairs", "compressed_pairs", "window_scope",
                   "indexer_skip_within_topk")

# Hardware (implementation) knobs with a finite set of values: drawn from SCHEMA's choices.
HARDWARE_CHOICES = ("attention_impl", "moe_impl", "moe_dispatch", "moe_router_scale", "capacity_rule", "dsa_impl",
                    "remat_policy", "qkv_norms", "indexer_impl", "packed_kernel", "gdn_impl", "gdn_conv_impl",
                    "conv_weight_grad", "outer_product_grads", "weighted_sum_impl", "mamba_impl", "mamba_conv_impl",
                    "kda_impl", "kda_conv_impl", "lightning_impl", "mlstm_impl", "gdp_impl", "gdp_conv_impl", "dead_compressor",
                    "short_conv_impl", "differential_impl", "rglru_conv_impl", "msa_impl", "aux_conv_impl",
                    "dynamic_conv_impl", "qsa_impl")
HARDWARE_BOOLS = ("flash_backward_recompute", "mla_absorbed", "post_ffn_norm", "indexer_skip_short", "remat_mtp")

# The documented cases where hardware FLOPs may fall below model FLOPs (README "Hardware FLOPs", the
# capacity_factor and indexer_skip_short docs): key -> the values that may lower them.
# The knobs that may lower hardware below model FLOPs (maxflops.conventions.HARDWARE_BELOW_MODEL); packed_kernel='row'
# only does so for packed documents on chunked layers and has its own test.
LOWERING = {k: v for k, v in HARDWARE_BELOW_MODEL.items() if k != "packed_kernel"}

# The "ideal" implementation of every hardware knob: with these (and the exact convention, no vocabulary padding
# and no indexer loss) hardware == model.
IDEAL = {"attention_impl": "ideal", "moe_impl": "ideal", "dsa_impl": "ideal", "msa_impl": "ideal", "qsa_impl": "ideal",
         "aux_conv_impl": "valid", "dynamic_conv_impl": "valid", "remat_policy": "none",
         "flash_backward_recompute": False, "mla_absorbed": False, "gdn_impl": "recurrent", "gdn_conv_impl": "valid",
         "conv_weight_grad": "grouped", "indexer_skip_short": False, "outer_product_grads": "matmul",
         "weighted_sum_impl": "einsum", "indexer_impl": "attention", "packed_kernel": "varlen",
         "make_vocab_size_divisible_by": 1, "mamba_impl": "recurrent", "mamba_conv_impl": "valid",
         "kda_impl": "recurrent", "kda_conv_impl": "valid", "lightning_impl": "recurrent", "mlstm_impl": "recurrent",
         "gdp_impl": "recurrent", "gdp_conv_impl": "valid", "short_conv_impl": "valid",
         "differential_impl": "doubled_values", "rglru_conv_impl": "valid", "warmup_dead_last_layer": False,
         "pipeline_stages": 1,
         "dead_compressor": "forward"}  # (a compressor that forms no block: test_properties.dead_compressors)

WIDTH_KEYS = ("emb_dim", "head_dim", "global_head_dim", "attention_output_dim", "q_lora_rank", "kv_lora_rank",
              "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "mlp_dim", "moe_mlp_dim", "shared_expert_mlp_dim",
              "moe_latent_size",
              "index_head_dim", "o_lora_rank", "per_layer_input_dim", "engram_head_dim", "vision_hidden_dim",
              "vision_mlp_dim", "vision_patch_dim", "gdn_key_head_dim", "gdn_value_head_dim", "mamba_head_dim",
              "mamba_state_dim", "mamba1_inner_dim", "kda_head_dim", "lightning_head_dim", "value_head_dim",
              "zamba_mlp_dim", "gdp_head_dim", "gdp_state_dim")

# Keys the strategy never draws, with the reason (the rest are all drawn; see COVERED).
NOT_DRAWN = {
    "convention_knobs_from": "set by the library (resolve overwrites it with 'convention'); internal",
    "prompt_tokens": "refused with packed documents, which the properties draw: held by tests/core/test_prompt_tokens.py "
                     "to the same model counted at L + P (its layers) and L (its head)",
}


def usable_letters(convention: str, compressed: bool) -> str:
    """The mixer letters a drawn model may use, read from the family registry: every family's letters whose
    conventions have a rule for it (``Family.conventions``; Kimi delta attention has none under Megatron-LM main, for
    one), or with attention_type='compressed' the letters such a model is built of. Plain attention's come first
    (hypothesis shrinks towards the first)."""
    usable = [f for f in sorted(FAMILIES, key=lambda f: f.name != "attention")
              if not f.conventions or convention in f.conventions]
    if compressed:
        return "".join(k for f in usable for k in f.letters if k in BUILT_WITH)
    return "".join(k for f in usable if f.projection != "compressed" for k in f.letters)


# The letters of the families whose layers have projections of their own (not attention's, which
# attention_output_dim shapes)
OWN_PROJECTION = "".join(k for f in FAMILIES if f.projection not in ("", "compressed") for k in f.letters)


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _maybe(draw, value):
    """``value`` or 0 (the key's 'off' value)."""
    return value if draw(st.booleans()) else 0


@st.composite
def config_kwargs(draw, mode=None, convention=None, knobs=None, impl="random", integer_batch=False, vision=True,
                  max_len=48, lowering=None, causal=None, mtp=None, attention_type=None):
    """Keyword arguments of ``maxflops.model_config`` for a random valid config.

    mode / convention / attention_type: fixed, or None to draw. knobs: True to set some reporting knobs
    explicitly, False for none, None to draw. impl: 'random' draws every hardware knob, 'ideal' sets ``IDEAL``.
    lowering: False keeps the ``LOWERING`` knobs at values that cannot lower hardware FLOPs (None: draw).
    integer_batch: a whole per_device_batch_size. vision: allow a vision encoder. causal: force it (None: draw).
    mtp: force MTP modules on/off (None: draw)."""
    kw = {}
    mode = mode or draw(st.sampled_from(SCHEMA["mode"].choices))
    kw["mode"] = mode
    if convention is None:
        convention = "exact" if mode != "train" else draw(st.sampled_from(CONVENTION_NAMES))
    kw["convention"] = convention
    kw["model_name"] = draw(st.text(alphabet="abcxyz-._0123", min_size=1, max_size=8))

    widths = draw(st.lists(st.integers(2, 60), min_size=len(WIDTH_KEYS), max_size=len(WIDTH_KEYS), unique=True))
    w = dict(zip(WIDTH_KEYS, widths))

    n = draw(st.integers(1, 5))
    n_mtp = draw(st.integers(0, 2)) if mtp is None else (draw(st.integers(1, 2)) if mtp else 0)
    kw["num_decoder_layers"], kw["mtp_num_layers"] = n, n_mtp
    kw["emb_dim"] = w["emb_dim"]
    kw["vocab_size"] = draw(st.integers(61, 300))
    kw["head_dense"] = draw(st.booleans())  # ModernBERT's prediction head before the output head

    # --- attention ---------------------------------------------------------------------------------------
    atype = attention_type or draw(st.sampled_from(SCHEMA["attention_type"].choices))
    kw["attention_type"] = atype
    compressed = atype == "compressed"
    letters = usable_letters(convention, compressed)
    if atype != "global":  # cross-attention and MiniMax sparse attention layers are modelled on GQA
        letters = letters.replace("X", "").replace("B", "").replace("Q", "").replace("E", "").replace("O", "")
        letters = letters.replace("Y", "").replace("U", "")  # (BLT's patch cross-attention: GQA's)
    if mode == "decode":  # (BLT's patch layers: no decode step modelled)
        letters = letters.replace("Y", "").replace("U", "")
    if draw(st.booleans()):  # one letter per decoder layer (and some unused ones past the last layer)
        pattern = "".join(draw(st.lists(st.sampled_from(letters), min_size=n, max_size=n + 2)))
    else:  # a cycle
        pattern = "".join(draw(st.lists(st.sampled_from(letters), min_size=1, max_size=min(n, 4))))
    kw["attention_layer_pattern"] = pattern
    if n_mtp and draw(st.booleans()):  # the MTP modules' own mixers, a cycle
        kw["mtp_layer_pattern"] = "".join(draw(st.lists(st.sampled_from(_decoder_only(letters) or "G"), min_size=1,
                                                        max_size=2)))  # (cross-attention: in the decoder only)
    pattern += kw.get("mtp_layer_pattern", "")  # every letter a layer may use (the checks below are conservative)
    H = draw(st.sampled_from([1, 2, 3, 4, 6]))
    kw["num_query_heads"] = H
    if "Z" in pattern and (2 * kw["emb_dim"]) % H:  # Zamba2's block: heads of 2 x emb_dim / H
        H = kw["num_query_heads"] = 2
    kw["num_kv_heads"] = draw(st.sampled_from(_divisors(H)))
    kw["head_dim"] = w["head_dim"]
    indexer = atype != "global" and draw(st.booleans())
    kw["use_sparse_indexer"] = indexer
    if causal is None:
        causal = compressed or indexer or mode == "decode" or any(x in pattern for x in "ZBQEO") \
            or draw(st.integers(0, 4)) > 0
    kw["causal"] = causal
    if atype == "global":
        kw["global_head_dim"] = _maybe(draw, w["global_head_dim"])
        kw["global_num_kv_heads"] = _maybe(draw, draw(st.sampled_from(_divisors(H))))
        kw["share_kv_projections"] = draw(st.booleans())
        kw["attention_output_gate"] = draw(st.booleans())
        kw["attention_head_gate"] = draw(st.booleans())  # LFM3's scalar gate per head
        if not kw["share_kv_projections"]:  # values of their own width (MiMo-V2-Flash)
            kw["value_head_dim"] = _maybe(draw, w["value_head_dim"])
        if convention == "exact" and draw(st.integers(0, 4)) == 0:  # JetMoE's mixture of attention heads
            kw["attention_router_experts"] = H // kw["num_kv_heads"] + draw(st.integers(0, 3))
        even = H % 2 == 0 and kw["num_kv_heads"] % 2 == 0
        if convention == "exact" and even and draw(st.integers(0, 3)) == 0:  # DiffLlama's differential attention
            kw.update(attention_differential=True, global_head_dim=0, global_num_kv_heads=0,
                      share_kv_projections=False, value_head_dim=0)
        if convention == "exact" and not kw.get("attention_differential") and not kw.get("attention_router_experts") \
                and draw(st.integers(0, 4)) == 0:  # ZAYA's compressed convolutional attention (even head widths)
            kw.update(cca_depthwise_kernel=draw(st.integers(1, 3)), cca_grouped_kernel=draw(st.integers(1, 3)),
                      global_head_dim=0, global_num_kv_heads=0, share_kv_projections=False, value_head_dim=0,
                      head_dim=2 * max(1, w["head_dim"] // 2))
    if atype == "mla":
        kw["attention_head_gate"] = draw(st.booleans())  # Dots3's sigmoid gate per head
        kw["attention_output_gate"] = draw(st.booleans())  # Kimi K3's gate per value channel
        if convention == "exact":  # A.X K2's q up-projection over the normed and raw q latent (needs the latent)
            kw["mla_q_latent_concat"] = draw(st.booleans())
        kw["kv_lora_rank"] = w["kv_lora_rank"]
        kw["qk_nope_head_dim"] = draw(st.sampled_from([0, w["qk_nope_head_dim"]]))
        kw["qk_rope_head_dim"] = draw(st.sampled_from([0, w["qk_rope_head_dim"]]))
        kw["v_head_dim"] = w["v_head_dim"]
    if atype != "global":
        kw["q_lora_rank"] = w["q_lora_rank"] if kw.get("mla_q_latent_concat") else _maybe(draw, w["q_lora_rank"])
    if compressed and draw(st.booleans()):
        kw["o_groups"] = draw(st.sampled_from(_divisors(H * w["head_dim"])))
        kw["o_lora_rank"] = w["o_lora_rank"]
    if not set(OWN_PROJECTION) & set(pattern):
        kw["attention_output_dim"] = _maybe(draw, w["attention_output_dim"])
    if convention == "exact" and atype == "global" and causal and "C" not in pattern and draw(st.integers(0, 4)) == 0:
        kw["dynamic_mask_keys"] = draw(st.integers(1, 30))  # Doge's dynamic mask (no k/v convs, no KV sharing)
    if not compressed and kw.get("attention_type", "global") != "mla" and not kw.get("cca_depthwise_kernel") \
            and not kw.get("dynamic_mask_keys"):
        # (KV sharing is modelled for GQA only, without CCA or the dynamic mask)
        kw["num_kv_shared_layers"] = draw(st.integers(0, n - 1))
        kw["double_wide_kv_shared_mlp"] = draw(st.booleans())
    windowed = any(ch in pattern for ch in "LSH")
    kw["sliding_window_size"] = draw(st.integers(1, 40)) if windowed else draw(st.sampled_from([0, 5]))
    kw["chunk_attn_window_size"] = draw(st.integers(1, 40)) if "C" in pattern else draw(st.sampled_from([0, 7]))
    if compressed:
        kw["csa_compress_ratio"] = draw(st.integers(1, 8))
        kw["hca_compress_ratio"] = draw(st.integers(1, 12))
    # --- DSA indexer -------------------------------------------------------------------------------------
    if indexer:
        kw["index_n_heads"] = draw(st.integers(1, 4))
        kw["index_head_dim"] = w["index_head_dim"]
        kw["index_topk"] = draw(st.integers(1, 40))
        kw["index_topk_freq"] = draw(st.integers(1, 4))
        kw["index_skip_offset"] = draw(st.integers(0, 6))
        kw["indexer_loss_scaling_factor"] = draw(st.sampled_from([0.0, 0.5, 1.0]))
        kw["indexer_loss_pairs"] = draw(st.sampled_from(["all", "selected"]))  # the sparse loss (Megatron's)
        kw["indexer_stage"] = draw(st.sampled_from(SCHEMA["indexer_stage"].choices))
    if "B" in pattern:  # MiniMax sparse attention: its indexer's widths, blocks and top-k
        kw["index_n_heads"] = draw(st.integers(1, 4))
        kw["index_head_dim"] = w["index_head_dim"]
        kw["msa_block_size"] = draw(st.integers(1, 8))
        kw["msa_topk_blocks"] = draw(st.integers(1, 4))
        kw["msa_local_blocks"] = draw(st.integers(1, kw["msa_topk_blocks"]))
    if "Q" in pattern:  # QSA: its indexer's widths, blocks and budget
        kw["index_n_heads"] = draw(st.integers(1, 4))
        kw["index_head_dim"] = w["index_head_dim"]
        kw["qsa_block_size"] = draw(st.integers(1, 8))
        kw["qsa_budget"] = kw["qsa_block_size"] * draw(st.integers(1, 4))
    if "E" in pattern or "O" in pattern:  # Reformer: its chunks, LSH's rounds and hash width, the 2D-wide head
        # (LSH runs whole chunks: chunks of 1, or one longer than any drawn sequence, fit every length)
        kw["lsh_chunk_length"], kw["local_chunk_length"] = draw(st.sampled_from([1, 64])), draw(st.integers(1, 8))
        kw["lsh_chunks_before"], kw["local_chunks_before"] = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        kw["lsh_num_hashes"] = draw(st.integers(1, 3))
        kw["lsh_hash_width"] = draw(st.integers(0, 6))
        kw["lsh_max_positions"] = draw(st.integers(1, 4096))
        kw["head_input_dim"] = draw(st.sampled_from([0, 2 * kw["emb_dim"]]))
    if convention == "exact" and atype == "global" and draw(st.integers(0, 3)) == 0:  # Inkling's attention extras
        kw["relative_logits_dim"] = draw(st.integers(1, 4))
        kw["relative_logits_extent"] = draw(st.integers(1, 20))
        kw["kv_conv_kernel"] = 0 if kw.get("cca_depthwise_kernel") or kw.get("dynamic_mask_keys") else \
            draw(st.integers(0, 4))
        if kw["kv_conv_kernel"]:  # Inkling 2's per-token taps
            kw["kv_conv_dynamic_layers"] = draw(st.sampled_from(["", "G", "L", "GLC"]))
        kw["attention_sink_proj"] = draw(st.booleans())  # Inkling 2's sinks from D
    if convention == "exact" and draw(st.integers(0, 3)) == 0:  # Inkling's convs over the branches' outputs
        kw["residual_conv_kernel"] = draw(st.integers(1, 4))
    if convention == "exact" and draw(st.integers(0, 3)) == 0:  # A.X K2's gated norms
        kw["gated_norm_rank"] = draw(st.integers(1, 5))
    # --- FFN ---------------------------------------------------------------------------------------------
    kw["mlp_activations"] = draw(st.sampled_from([("silu", "linear"), ("gelu",), ("relu",), ("gelu", "linear")]))
    kw["mlp_dim"] = w["mlp_dim"]
    E = draw(st.sampled_from([1, 1, 2, 3, 4, 6]))
    kw["num_experts"] = E
    if E > 1:
        kw["num_experts_per_tok"] = draw(st.integers(1, E))
        kw["moe_mlp_dim"] = w["moe_mlp_dim"]
        kw["shared_experts"] = draw(st.integers(0, 2))
        kw["shared_expert_mlp_dim"] = _maybe(draw, w["shared_expert_mlp_dim"])
        kw["shared_expert_gate"] = draw(st.booleans())
        if convention == "exact":  # ZAYA's MLP router, Doge's ungated experts beside gated FFNs
            kw["moe_router_mlp_dim"] = draw(st.sampled_from([0, 0, 5]))
            kw["moe_experts_ungated"] = len(kw["mlp_activations"]) == 2 and draw(st.booleans())
        if kw["shared_experts"] and convention == "exact":  # Inkling's router scores the shared experts too
            kw["moe_router_shared"] = draw(st.booleans())
        kw["moe_latent_size"] = _maybe(draw, w["moe_latent_size"])  # a latent MoE (Nemotron-3 Super)
        kw["first_num_dense_layers"] = draw(st.integers(0, n))
        kw["interleave_moe_layer_step"] = draw(st.integers(1, 3))
        if convention == "exact" and E >= 4 and kw["num_experts_per_tok"] <= 4 and not kw.get("moe_router_mlp_dim") \
                and not kw.get("moe_router_shared") and draw(st.integers(0, 3)) == 0:  # Doge's product keys
            kw["moe_router_product_keys"] = True
        elif convention == "exact" and draw(st.integers(0, 3)) == 0:  # zero-computation experts (LongCat-Flash)
            kw["zero_experts"] = draw(st.integers(1, 3))
            kw["zero_expert_share"] = draw(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0]))
    # --- per-layer extras -------------------------------------------------------------------------------
    kw["per_layer_input_dim"] = _maybe(draw, w["per_layer_input_dim"])
    if draw(st.booleans()):
        kw["engram_layers"] = tuple(sorted(draw(st.sets(st.integers(0, n - 1), min_size=1))))
        kw["engram_num_heads"] = draw(st.integers(1, 3))
        kw["engram_head_dim"] = w["engram_head_dim"]
        kw["engram_max_ngram_size"] = draw(st.integers(2, 4))
        kw["engram_kernel_size"] = draw(st.integers(1, 4))
    if convention == "exact" and draw(st.integers(0, 3)) == 0:  # layers of their own widths (Llama-Nemotron)
        rules = []
        for layer in sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3))):
            mla = kw.get("attention_type") == "mla"
            key = draw(st.sampled_from(["mlp_dim", "moe_mlp_dim", "num_query_heads", "num_kv_heads", "head_dim"]
                                       + (["kv_lora_rank", "qk_nope_head_dim", "v_head_dim"] if mla else [])))
            q = kw.get("num_query_heads", SCHEMA["num_query_heads"].default)
            kv = kw.get("num_kv_heads", SCHEMA["num_kv_heads"].default)
            if key in ("num_kv_heads", "num_query_heads") and (kw.get("attention_differential")
                                                                or kw.get("attention_router_experts")):
                key = "mlp_dim"  # (heads in pairs: kept even by the config's own)
            if key in ("num_kv_heads", "head_dim") and (kw.get("global_num_kv_heads") or kw.get("global_head_dim")
                                                         or kw.get("attention_type") == "mla"
                                                         or kw.get("cca_depthwise_kernel")):
                key = "mlp_dim"  # (a 'G' layer's own widths are those keys' there; MLA reads neither)
            value = {"num_query_heads": kv * draw(st.integers(1, 3)), "num_kv_heads": draw(st.sampled_from(
                _divisors(q)))}.get(key) or draw(st.integers(1, 24))
            rules.append(f"{key}@{layer}={value}")
        kw["layer_widths"] = tuple(rules)
    kw["mhc_expansion_rate"] = draw(st.sampled_from([1, 1, 2, 3]))
    kw["mhc_hyper_head"] = kw["mhc_expansion_rate"] > 1 and draw(st.booleans())
    if kw["mhc_expansion_rate"] > 1 and convention == "exact":  # HY-V4's streams kept, not mixed
        kw["mhc_plain_residual"] = draw(st.booleans())
        if kw["mhc_plain_residual"]:  # Qwen4-Exp's gated hyper-connections
            kw["mhc_lowrank"] = draw(st.sampled_from([0, 0, 1, 3]))
    if kw["mhc_expansion_rate"] > 1:  # Inkling's branch convs and A.X K2's gated norms: one residual stream
        kw.pop("residual_conv_kernel", None), kw.pop("gated_norm_rank", None)
    if convention == "exact" and kw["mhc_expansion_rate"] == 1 and not kw.get("mtp_num_layers") \
            and draw(st.integers(0, 3)) == 0:  # Gemma 3n's AltUp streams and LAuReL
        kw["altup_num_inputs"] = draw(st.integers(1, 4))
        kw["laurel_rank"] = draw(st.integers(0, 5))
        kw.pop("residual_conv_kernel", None), kw.pop("gated_norm_rank", None)
    # --- vision ------------------------------------------------------------------------------------------
    if vision and draw(st.integers(0, 3)) == 0:
        kw["vision_layers"] = draw(st.integers(1, 2))
        kw["vision_hidden_dim"] = w["vision_hidden_dim"]
        kw["vision_mlp_dim"] = w["vision_mlp_dim"]
        kw["vision_patch_dim"] = w["vision_patch_dim"]
        kw["vision_patches"] = draw(st.integers(1, 20))
        kw["vision_extra_tokens"] = draw(st.integers(0, 2))
        stage = st.tuples(st.integers(1, 9), st.integers(1, 30), st.integers(1, 30)).map(
            lambda t: "%d:%d:%d" % t)
        kw["vision_encoder_stages"] = tuple(draw(st.lists(stage, max_size=2)))
        kw["vision_projector"] = tuple(draw(st.lists(stage, max_size=2)))
        kw["vision_images"] = draw(st.integers(1, 3))
        kw["vision_frozen"] = draw(st.booleans())
    # --- gated delta net ---------------------------------------------------------------------------------
    if "D" in pattern:
        kw["gdn_num_key_heads"] = draw(st.integers(1, 3))
        kw["gdn_num_value_heads"] = draw(st.integers(1, 4))
        kw["gdn_key_head_dim"] = w["gdn_key_head_dim"]
        kw["gdn_value_head_dim"] = w["gdn_value_head_dim"]
        kw["gdn_conv_kernel_dim"] = draw(st.integers(1, 5))
    # --- Mamba-2 ----------------------------------------------------------------------------------------------
    if "M" in pattern:
        heads = draw(st.sampled_from([1, 2, 3, 4, 6]))
        kw["mamba_num_heads"] = heads
        kw["mamba_n_groups"] = draw(st.sampled_from(_divisors(heads)))
        kw["mamba_head_dim"] = w["mamba_head_dim"]
        kw["mamba_state_dim"] = w["mamba_state_dim"]
        kw["mamba_conv_kernel"] = draw(st.integers(1, 5))
    if "A" in pattern:
        kw["mamba1_inner_dim"] = w["mamba1_inner_dim"]
        kw["mamba1_state_dim"] = draw(st.integers(1, 6))
        kw["mamba1_dt_rank"] = draw(st.integers(1, 4))
        kw["mamba1_conv_kernel"] = draw(st.integers(1, 5))
    if "V" in pattern:
        kw["short_conv_kernel"] = draw(st.integers(1, 5))
    if "K" in pattern:
        kw["kda_num_heads"] = draw(st.integers(1, 3))
        kw["kda_head_dim"] = w["kda_head_dim"]
        kw["kda_gate_rank"] = draw(st.integers(0, 6))
        kw["kda_full_rank_gate"] = draw(st.booleans())  # Kimi K3's output gate
        kw["kda_full_rank_forget_gate"] = draw(st.booleans())  # Ling's forget gate
        kw["kda_conv_kernel"] = draw(st.integers(1, 5))
    if "P" in pattern:
        heads = draw(st.sampled_from([1, 2, 3, 4, 6]))
        kw["gdp_num_heads"] = heads
        kw["gdp_num_groups"] = draw(st.sampled_from(_divisors(heads)))
        kw["gdp_head_dim"] = w["gdp_head_dim"]
        kw["gdp_state_dim"] = w["gdp_state_dim"]
        kw["gdp_num_householder"] = draw(st.integers(1, 4))
        kw["gdp_conv_kernel"] = draw(st.integers(1, 5))
    if "Z" in pattern:
        kw["zamba_mlp_dim"] = w["zamba_mlp_dim"]
        kw["zamba_adapter_rank"] = draw(st.integers(0, 4))
        kw["zamba_head_dim"] = draw(st.sampled_from([0, 0, 3, 5]))  # 0: 2 emb_dim / heads
        kw["zamba_attention_adapters"] = kw["num_kv_heads"] == H and draw(st.booleans())
    if "R" in pattern:  # Griffin's recurrent block: its width (0: emb_dim) in blocks that divide it
        width = draw(st.sampled_from([0, 6, 12]))
        kw["rglru_width"] = width
        kw["rglru_num_heads"] = draw(st.sampled_from(_divisors(width or kw["emb_dim"])))
        kw["rglru_conv_kernel"] = draw(st.integers(1, 5))
    if "W" in pattern:  # RWKV's time mix: its own width (0: emb_dim)
        kw["rwkv_attention_dim"] = draw(st.sampled_from([0, 5, 12]))
    if "Y" in pattern or "U" in pattern:  # BLT's patch cross-attention: k, and the patches (0: L + 1)
        kw["patch_cross_k"] = draw(st.integers(1, 3))
        kw["patches_per_sequence"] = draw(st.sampled_from([0, 0, 3, 9]))
    if "X" in pattern:
        kw["cross_attention_tokens"] = draw(st.sampled_from([0, 1, 6, 13]))  # 0: the layers idle (text alone)
    if "T" in pattern:  # xLSTM's mLSTM: heads, and q/k and v widths whole numbers of them
        H_m = kw["mlstm_num_heads"] = draw(st.integers(1, 3))
        kw["mlstm_qk_dim"] = H_m * draw(st.integers(1, 4))
        kw["mlstm_v_dim"] = H_m * draw(st.integers(1, 4))
    if "N" in pattern:
        kw["lightning_num_heads"] = draw(st.integers(0, 3))
        kw["lightning_head_dim"] = draw(st.sampled_from([0, w["lightning_head_dim"]]))
    # --- layer shapes: a mixer alone, an FFN alone (Nemotron-H) ---------------------------------------------
    if not compressed and draw(st.integers(0, 3)) == 0:
        def shaped(mixers):  # each layer's mixer and FFN, or the mixer alone, or the FFN alone
            out_mixers, ffns = [], []
            for m in mixers:
                shape = draw(st.sampled_from(["both", "mixer", "ffn"]))
                ffns.append("-" if shape == "mixer" else draw(st.sampled_from("FE" if E > 1 else "F")))
                out_mixers.append("-" if shape == "ffn" else m)
            return "".join(out_mixers), "".join(ffns)

        mixers = [kw["attention_layer_pattern"][l % len(kw["attention_layer_pattern"])] for l in range(n)]
        kw["attention_layer_pattern"], kw["ffn_layer_pattern"] = shaped(mixers)
        mixers = kw["attention_layer_pattern"]
        kw["first_num_dense_layers"], kw["interleave_moe_layer_step"] = 0, 1
        choices = sorted(set(pattern) & set(letters) - {"Z", "X", "Y", "U"})
        if n_mtp and choices:  # each MTP module's own layers (Megatron's hybrid pattern after '/'), of the letters drawn
            size = draw(st.integers(1, 2))
            kw["mtp_layer_pattern"], kw["mtp_ffn_layer_pattern"] = shaped(
                [draw(st.sampled_from(choices)) for _ in range(size)])
        elif n_mtp:  # (no mixer letter to give them: FFN-only layers)
            kw["mtp_layer_pattern"], kw["mtp_ffn_layer_pattern"] = "-", draw(st.sampled_from("FE" if E > 1 else "F"))
        elif draw(st.booleans()):  # a second mixer beside the first (Falcon-H1), of the letters already drawn
            kw["parallel_layer_pattern"] = "".join(
                "-" if m == "-" or not draw(st.booleans()) or not set(pattern) & set(letters) - {"X", "Y", "U"}
                else draw(st.sampled_from(sorted(set(pattern) & set(letters) - {"X", "Y", "U"}))) for m in mixers)
    if convention == "megatron_bridge" and bridge_refusal({**SCHEMA_DEFAULTS, **kw}):
        # a compressed model its DeepSeek-V4 rule has no term for: refused (test_megatron_bridge.py); Megatron-LM
        # has no KDA rule
        kw["convention"] = convention = (
            "exact" if set(pattern) - set(usable_letters("megatron_main", compressed)) else "megatron_main")
    # --- the step ----------------------------------------------------------------------------------------
    if integer_batch or mode == "decode":
        b = draw(st.integers(1, 3))
    else:
        b = draw(st.sampled_from([1, 2, 3, 1, 0.5, 1.5, 0.25]))
    kw["per_device_batch_size"] = b
    den = Fraction(b).denominator
    kw["max_target_length"] = den * draw(st.integers(1, max(1, max_len // den)))
    kw["decode_kv_length"] = draw(st.integers(0, max_len))
    kw["gradient_accumulation_steps"] = draw(st.sampled_from([1, 1, 2, 3]))
    # --- hardware knobs ----------------------------------------------------------------------------------
    if impl == "ideal":
        kw.update(IDEAL)
        if mode == "train" and indexer:
            kw["indexer_loss_scaling_factor"] = 0.0
    else:
        for key in HARDWARE_CHOICES:
            kw[key] = draw(st.sampled_from(SCHEMA[key].choices))
        if kw.get("zero_experts") and kw["moe_impl"] == "capacity":  # (refused: test_hf_eager's LongCat case)
            kw["moe_impl"] = "ideal"
        if kw.get("cca_depthwise_kernel"):  # (CCA's convs: 'valid' or 'padded', grouped weight gradients)
            kw["aux_conv_impl"] = draw(st.sampled_from(["valid", "padded"]))
            kw["conv_weight_grad"] = "grouped"
        for key in HARDWARE_BOOLS:
            kw[key] = draw(st.booleans())
        # the split flash backward (two kernels) needs the recompute; only a training step reads it
        kw["flash_backward_split"] = kw["flash_backward_recompute"] and kw.get("mode") == "train" and \
            draw(st.booleans())
        kw["attention_block_q"] = draw(st.integers(1, 24))
        kw["attention_block_kv"] = draw(st.integers(1, 24))
        kw["capacity_factor"] = draw(st.sampled_from([0.5, 1.0, 1.25, 1.3, 2.0]))
        if kw["moe_impl"] == "capacity":
            kw["moe_down_grad_replicas"] = draw(st.integers(1, 4))
        kw["moe_routing_replicas"] = draw(st.integers(1, 3))
        kw["gdn_chunk_size"] = draw(st.integers(1, 16))
        kw["mamba_chunk_size"] = draw(st.integers(1, 16))
        kw["kda_chunk_size"] = draw(st.integers(1, 16))
        kw["gdp_chunk_size"] = draw(st.integers(1, 16))
        kw["lightning_block_size"] = draw(st.integers(1, 16))
        kw["mlstm_chunk_size"] = draw(st.integers(1, 16))
        kw["make_vocab_size_divisible_by"] = draw(st.sampled_from([1, 8, 128]))
        kw["tensor_parallel_size"] = draw(st.integers(1, 4))
        skip = draw(st.integers(0, n))
        kw["remat_skip_layers"] = skip
        kw["remat_block_layers"] = draw(st.integers(1, max(n - skip, 1)))
        kw["warmup_cse_layers"] = tuple(sorted(draw(st.sets(st.integers(0, n - 1), max_size=2))))
        kw["warmup_dead_last_layer"] = draw(st.booleans())
        kw["pipeline_stages"] = draw(st.integers(1, 3))
        kw["pipeline_microbatches"] = draw(st.integers(0, 4))
        kw["pipeline_repeats"] = draw(st.integers(1, 2))
        kw["pipeline_delay"] = draw(st.booleans())
        kw["pipeline_layers"] = tuple(sorted(draw(st.sets(st.integers(0, n - 1), max_size=2))))
        if lowering is None:
            lowering = draw(st.booleans())
        if not lowering:
            kw.update(mla_absorbed=False, outer_product_grads="matmul", weighted_sum_impl="einsum",
                      indexer_skip_short=False, capacity_factor=max(kw["capacity_factor"], 1.0),
                      warmup_dead_last_layer=False)
            if kw.get("attention_type") == "compressed":  # every compressed layer forms a block
                T = kw["max_target_length"]
                kw.update(csa_compress_ratio=min(kw["csa_compress_ratio"], T),
                          hca_compress_ratio=min(kw["hca_compress_ratio"], T))
    for key in ("weight_bytes", "kv_cache_bytes", "index_cache_bytes", "state_bytes"):
        kw[key] = draw(st.integers(1, 4))
    kw["weight_bytes_rules"] = draw(st.sampled_from([(), ("moe_routed=17/32",), ("*=1", "attention@0+2-3=9/16")]))
    # a mesh: the batch padded to whole sequences per batch shard (where the global batch is whole sequences)
    devices, shards = draw(st.sampled_from([(0, 0), (0, 0), (8, 8), (8, 4), (4, 2), (2, 1)]))
    # (the ideal implementations run the model's share: a batch padded per shard is not one of them)
    if devices and impl != "ideal" and \
            (Fraction(kw["per_device_batch_size"]).limit_denominator(1 << 20) * devices).denominator == 1:
        kw["num_devices"], kw["batch_shards"] = devices, shards
    # --- reporting knobs and quirks ----------------------------------------------------------------------
    if knobs is None:
        knobs = draw(st.integers(0, 3)) == 0
    if knobs:
        for key in draw(st.lists(st.sampled_from(REPORTING_KNOBS), min_size=1, max_size=6, unique=True)):
            kw[key] = draw(knob_value(key))
        if draw(st.booleans()):
            conv = draw(st.sampled_from([n for n in CONVENTION_NAMES if n != "megatron_bridge"]))
            key = draw(st.sampled_from(REPORTING_KNOBS))
            value = draw(knob_value(key))
            kw["convention_quirks"] = (f"{conv}:{key}={value}",)
    if draw(st.integers(0, 5)) == 0:
        kw["not_priced"] = ("model: a part left out",)
    if kw.get("convention", convention) == "exact" and kw.get("remat_block_layers", 1) == 1 and \
            kw.get("pipeline_stages", 1) == 1 and not kw.get("warmup_cse_layers") and \
            not kw.get("warmup_dead_last_layer") and draw(st.integers(0, 4)) == 0:  # looped depth (Dory)
        a, k = draw(st.integers(0, n - 1)), draw(st.integers(1, 3))
        grads = f"/{draw(st.integers(0, k))}" if draw(st.booleans()) else ""  # HRM's passes without a gradient
        kw["layer_loops"] = (f"{a}-{draw(st.integers(a, n - 1))}*{k}{grads}",)
    if kw.get("convention", convention) == "exact" and not kw.get("mtp_num_layers") \
            and not kw.get("parallel_layer_pattern") and kw.get("mhc_expansion_rate", 1) == 1 \
            and not kw.get("prompt_tokens") and "-" not in kw["attention_layer_pattern"] + kw.get("ffn_layer_pattern", "") \
            and not kw.get("gated_norm_rank") \
            and not kw.get("altup_num_inputs") and not kw.get("laurel_rank") and draw(st.integers(0, 3)) == 0:  # attention residuals (Kimi K3)
        kw["attn_res_block_size"] = draw(st.integers(1, 4))
        kw["attn_res_qkv_layers"] = draw(st.sampled_from(["", "G", "GL"]))  # (Inkling 2's full layers: 'G')
        if kw.get("layer_loops"):  # Inkling 2 Loop's messages, on a loop of whole blocks after layer 0
            a, b, k = map(int, kw["layer_loops"][0].split("/")[0].replace("*", "-").split("-"))
            block = kw["attn_res_block_size"]
            if k > 1 and a > 0 and a % block == 0 and (b + 1) % block == 0:
                kw["loop_message_rank"] = draw(st.integers(0, 3))
    every = kw["attention_layer_pattern"] + kw.get("mtp_layer_pattern", "") + kw.get("parallel_layer_pattern", "")
    if "E" in every or "O" in every:  # Reformer's plain heads
        for key in ("value_head_dim", "attention_output_gate", "attention_head_gate", "attention_sink_proj",
                    "global_head_dim", "kv_conv_kernel", "cca_depthwise_kernel", "cca_grouped_kernel",
                    "dynamic_mask_keys", "attention_differential", "attention_router_experts", "num_kv_shared_layers",
                    "kv_conv_dynamic_layers", "relative_logits_dim", "relative_logits_extent"):
            kw.pop(key, None)
        if "E" in every:  # (its heads everywhere)
            kw["num_kv_heads"] = kw["num_query_heads"]
            kw["layer_widths"] = tuple(r for r in kw.get("layer_widths", ()) if "heads" not in r)
        if kw.get("attention_impl") == "blocked":
            kw["attention_impl"] = "dense"
    if kw.get("convention", convention) == "exact" and not kw.get("mtp_num_layers") and not kw.get("layer_loops") \
            and kw.get("pipeline_stages", 1) == 1 and not kw.get("prompt_tokens") and draw(st.integers(0, 4)) == 0:
        # BLT's trunk parts: layers over the patch stream (not the patch family's own), frozen layers, the patcher's
        # head after a layer
        mixers = [kw["attention_layer_pattern"][l % len(kw["attention_layer_pattern"])] for l in range(n)]
        if mode != "decode":
            kw["patch_layers"] = sorted(draw(st.sets(st.sampled_from([l for l in range(n) if mixers[l] not in "YU"]
                                                                     or [None]))) - {None})
            kw.setdefault("patches_per_sequence", draw(st.sampled_from([0, 4])))
        kw["frozen_layers"] = sorted(draw(st.sets(st.integers(0, n - 1))))
        kw["patcher_head_layer"] = draw(st.integers(-1, n - 1))
    # the parameters' keys, no FLOPs effect (drawn last, so the draws above keep their examples): a tied head, a
    # learned position table, the per-layer embedding table's rows
    kw["logits_via_embedding"] = draw(st.booleans())
    kw["position_table_rows"] = draw(st.sampled_from([0, 2048]))
    if kw["per_layer_input_dim"]:
        kw["per_layer_vocab_size"] = draw(st.sampled_from([0, 4096]))
    if "Z" in kw["attention_layer_pattern"]:  # Zamba's blocks, run in turn
        kw["zamba_shared_blocks"] = draw(st.sampled_from([1, 2]))
    return kw


def packable(kw: dict) -> dict:
    """``kw`` for a count of packed documents: a patch stream's patches per document, not a stated count (which is a
    sequence's: refused with documents, see tests/families/test_patch.py)."""
    return {k: v for k, v in kw.items() if k != "patches_per_sequence"}


def without_patch_stream(kw: dict) -> dict:
    """``kw`` without BLT's patch stream (its layers and the patch family's 'Y' / 'U' as global ones), for a test
    that counts the config in decode (not modelled with a patch stream)."""
    out = {k: v for k, v in kw.items() if k not in ("patch_layers", "patches_per_sequence", "patch_cross_k")}
    for key in ("attention_layer_pattern",):
        out[key] = out[key].replace("Y", "G").replace("U", "G")
    return out


def _decoder_only(letters: str) -> str:
    """The letters an MTP module may use: not cross-attention's nor the patch family's (decoder layers only)."""
    return letters.replace("X", "").replace("Y", "").replace("U", "")


def knob_value(key):
    field = SCHEMA[key]
    if field.choices:
        return st.sampled_from(field.choices)
    if field.kind is bool:
        return st.booleans()
    if key == "indexer_train_factor":
        return st.integers(0, 3)
    if key in ("gdn_core_state_ops", "kda_core_state_ops"):
        return st.integers(1, 4)
    if key in ("mamba_scan_flops", "mamba1_scan_flops"):
        return st.integers(1, 7)
    if key in ("recompute_forwards", "recompute_attention_forwards"):
        return st.integers(0, 3)
    raise AssertionError(key)


# Keys drawn by config_kwargs (the test checks COVERED | NOT_DRAWN == SCHEMA).
COVERED = frozenset(WIDTH_KEYS) | frozenset(REPORTING_KNOBS) | frozenset(HARDWARE_CHOICES) | frozenset(
    HARDWARE_BOOLS) | frozenset(IDEAL) | {"flash_backward_split",
    "patch_cross_k", "patches_per_sequence", "patch_layers", "frozen_layers", "patcher_head_layer",
    "mode", "convention", "model_name", "weight_bytes_rules", "num_decoder_layers", "mtp_num_layers", "vocab_size", "attention_type",
    "attention_layer_pattern", "mtp_layer_pattern", "num_query_heads", "num_kv_heads", "use_sparse_indexer", "causal",
    "global_num_kv_heads", "share_kv_projections", "attention_output_gate", "o_groups", "num_kv_shared_layers",
    "double_wide_kv_shared_mlp", "sliding_window_size", "chunk_attn_window_size", "csa_compress_ratio",
    "hca_compress_ratio", "index_n_heads", "index_topk", "index_topk_freq", "index_skip_offset",
    "indexer_loss_scaling_factor", "indexer_loss_pairs", "indexer_stage", "mlp_activations", "num_experts", "num_experts_per_tok",
    "shared_experts", "shared_expert_gate", "first_num_dense_layers", "interleave_moe_layer_step", "engram_layers",
    "engram_num_heads", "engram_max_ngram_size", "engram_kernel_size", "mhc_expansion_rate", "mhc_hyper_head",
    "vision_layers", "vision_patches", "vision_extra_tokens", "vision_encoder_stages", "vision_projector",
    "vision_images", "vision_frozen", "gdn_num_key_heads", "gdn_num_value_heads", "gdn_conv_kernel_dim",
    "per_device_batch_size", "max_target_length", "decode_kv_length", "gradient_accumulation_steps",
    "attention_block_q", "attention_block_kv", "capacity_factor", "gdn_chunk_size", "tensor_parallel_size",
    "num_devices", "batch_shards", "moe_down_grad_replicas", "moe_routing_replicas", "warmup_cse_layers",
    "pipeline_stages", "pipeline_microbatches", "pipeline_repeats", "pipeline_delay", "pipeline_layers",
    "remat_skip_layers", "remat_block_layers", "weight_bytes", "kv_cache_bytes", "index_cache_bytes", "state_bytes",
    "convention_quirks", "not_priced", "mamba_num_heads", "mamba_n_groups", "mamba_conv_kernel", "mamba_chunk_size",
    "ffn_layer_pattern", "parallel_layer_pattern", "mtp_ffn_layer_pattern", "mamba1_state_dim", "mamba1_dt_rank", "mamba1_conv_kernel",
    "kda_num_heads", "kda_gate_rank", "kda_full_rank_gate", "kda_conv_kernel", "kda_chunk_size", "lightning_num_heads",
    "lightning_block_size", "gdp_num_heads", "gdp_num_groups", "gdp_num_householder", "gdp_conv_kernel",
    "gdp_chunk_size", "zero_experts", "zero_expert_share", "zamba_adapter_rank", "zamba_attention_adapters",
    "short_conv_kernel", "attention_head_gate", "head_dense", "logits_via_embedding", "position_table_rows", "per_layer_vocab_size",
    "zamba_shared_blocks", "layer_widths", "attention_differential",
    "attention_router_experts", "layer_loops", "zamba_head_dim", "cross_attention_tokens", "attn_res_block_size",
    "rglru_width", "rglru_num_heads", "rglru_conv_kernel", "rwkv_attention_dim", "msa_block_size", "msa_topk_blocks",
    "msa_local_blocks", "mla_q_latent_concat", "gated_norm_rank", "mhc_plain_residual", "mhc_lowrank",
    "kda_full_rank_forget_gate", "relative_logits_dim", "relative_logits_extent", "kv_conv_kernel",
    "residual_conv_kernel", "moe_router_shared", "altup_num_inputs", "laurel_rank", "cca_depthwise_kernel", "cca_grouped_kernel",
    "moe_router_mlp_dim", "dynamic_mask_keys", "moe_router_product_keys", "moe_experts_ungated", "mlstm_num_heads",
    "mlstm_qk_dim", "mlstm_v_dim", "mlstm_chunk_size", "qsa_block_size", "qsa_budget", "kv_conv_dynamic_layers", "attention_sink_proj",
    "attn_res_qkv_layers", "loop_message_rank", "lsh_chunk_length", "lsh_chunks_before", "lsh_num_hashes",
    "lsh_hash_width", "lsh_max_positions", "local_chunk_length", "local_chunks_before", "head_input_dim",
}


@st.composite
def segment_lengths(draw, max_len=40, max_docs=5):
    """(document lengths, max_target_length, per_device_batch_size) of a valid packed micro-batch."""
    docs = draw(st.lists(st.integers(1, max_len), min_size=1, max_size=max_docs))
    T = max(docs) + draw(st.integers(0, 5))
    rows = -(-sum(docs) // T) + draw(st.integers(0, 1))
    return docs, T, rows
