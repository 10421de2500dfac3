"""The peers' conventions as data: each convention's bundle of knobs (``CONVENTIONS``), its branches by kind of
model (``CONVENTION_BRANCHES``) and what it reproduces, with its source (``DESCRIPTIONS``). One place: the schema's
``convention`` and ``convention_knobs_from`` keys take their choices and their help from here, and
:mod:`maxflops.conventions` holds the rules that read them. Adding a convention is a bundle, a description and a test
that reproduces its source's own figure (docs/contributing.md, "Adding a peer's convention")."""

from __future__ import annotations

from typing import Any


# What each convention bundle sets. A knob given explicitly in the same config wins over its bundle.
CONVENTIONS: dict[str, dict[str, Any]] = {
    "exact": {},
    "maxtext": {
        "causal_pairs": "half_square",
        "window_pairs": "maxtext",
        "dsa_pairs": "maxtext",
        "indexer_pairs": "half_square",
        "indexer_skip_within_topk": True,
        "indexer_every_layer": True,
        "indexer_train_factor": 3,
        "indexer_stage_in_model": False,
        "gdn_conv_taps": "full",
        "gdn_core_state_ops": 4,
        "gate_projections": False,
        "shared_expert_gate_flops": False,
        "mtp_eh_proj": False,
        "mtp_logits": False,
        "ffn_all_moe": False,
        "mhc_outer_flops": True,
        "compressed_pairs": "maxtext",
    },
    "megatron": {
        "causal_pairs": "half_square",
        "window_pairs": "megatron",
        "window_scope": "all_layers",
        "dsa_pairs": "megatron",
        "indexer_pairs": "half_square",
        "indexer_train_factor": 3,
        "indexer_stage_in_model": False,
        "gdn_core_state_ops": 4,
        "gdn_conv_taps": "full",
        "shared_expert_gate_flops": False,
        "mtp_layer_numbering": "after_decoder",
        "router_flops": False,
        "indexer_head_reduction": False,
        "mtp_norm_flops": True,
        "mla_norm_flops": True,
        "padded_vocab_in_model_flops": True,
    },
}


# MaxText before its PR #1988 (merged 2025-07) counted causal attention as the whole L x L square, and windows as
# global layers: the figures of the MFU tables published before it (llama2-7b at 8,192 tokens, batch 4: 1,721.22
# TFLOP a step, where #1988's own table gives 1,510.11 after the halving)
CONVENTIONS["maxtext_pr1988_before"] = {**CONVENTIONS["maxtext"], "causal_pairs": "full_square",
                                        "window_pairs": "global"}


# PaLM's "6N + 12 L H Q T" per token (Chowdhery et al. 2022, appendix B; llm-foundry's MFU uses it too): every
# weight 6 times (N with the embedding: a tied table is the output head's weights) and attention as the whole
# square; the exact count otherwise. PaLM 540B's 46.2% MFU comes out of it to its printed rounding.
CONVENTIONS["palm"] = {"causal_pairs": "full_square", "window_pairs": "global"}


# Megatron-LM's papers count a GPT layer's GEMMs, attention as the whole square: model FLOPs 72 B s l h^2 (1 + s/6h +
# V/12hl) (Korthikanti et al. 2022, appendix A eq. 7: PaLM's count on a GPT), and hardware FLOPs with the
# recomputation on top, the logits not recomputed:
# - selective (eq. 8), 72 B s l h^2 (1 + s/3h + V/12hl): the attention term doubled, three more forwards of it (the
#   paper's text adds one; its table 5's HFU is eq. 8's);
# - full (Narayanan et al. 2021, eq. 3; the "Megatron paper formula" many trainers print with its factor 4),
#   96 B s l h^2 (1 + s/6h + V/16lh): every layer's forward once more.
CONVENTIONS["megatron_papers"] = dict(CONVENTIONS["palm"])
CONVENTIONS["megatron_papers_selective"] = {**CONVENTIONS["palm"], "recompute_attention_forwards": 3}
CONVENTIONS["megatron_papers_full"] = {**CONVENTIONS["palm"], "recompute_forwards": 1}


# 6N per token, the weights alone (no attention), each weight matmul forward and backward:
# - six_n, N with the embedding table (Llama 3's 3.8e25 FLOPs for 405B parameters over 15.6T tokens; GPT-3's C = 6ND):
#   an untied token table counts as one more matmul;
# - kaplan, N without the vocabulary (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1:
#   "excluding all vocabulary and positional embeddings"): no output head either.
# Both keep the exact count's weights, so they are defined wherever 'exact' is (WEIGHTS_ONLY).
CONVENTIONS["six_n"] = {"attention_flops": False, "embedding_flops": True}
CONVENTIONS["kaplan"] = {"attention_flops": False, "logits_flops": False}
WEIGHTS_ONLY = frozenset({"six_n", "kaplan"})


# Later Megatron-LM revisions, each the seed bundle with what that revision changed: main has neither windows nor
# DSA (DSA layers count as dense MLA, no indexer); #6148's head and #6753 (both on dev) have no window term, scale
# the dense pairs at floor(mean length) and price the indexer by its gradient rule; #6753 prices the core absorbed.
_NO_WINDOWS = {"window_pairs": "global", "window_scope": "pattern"}


# Megatron's hybrid path prices a Mamba layer with d_in = 2 x hidden, 7 FLOPs per (token, channel, state) for the
# scan and no conv (training.py's mamba_layer_flops, unchanged since 2025-03)
CONVENTIONS["megatron"].update({"mamba_scan_flops": 7, "mamba_inner_width": "twice_hidden", "ssm_conv_flops": False})


# main also prices gated-delta-product layers (its gated_delta_product_layer_flops): the core at (4 M + 3) per state
# element, the conv at every tap (gdn_conv_taps above)
CONVENTIONS["megatron_main"] = {**CONVENTIONS["megatron"], **_NO_WINDOWS, "dsa_pairs": "global", "indexer_flops": False,
                                "gdp_core_flops": "megatron"}


CONVENTIONS["megatron_pr6148"] = {**CONVENTIONS["megatron"], **_NO_WINDOWS, "dsa_pairs": "megatron_floor",
                                  "indexer_train_factor": 0}


CONVENTIONS["megatron_pr6753"] = {**CONVENTIONS["megatron_pr6148"], "dsa_core_form": "absorbed"}


# Megatron-Bridge: main's rules, plus its sliding-window context, the padding of a packed batch, DSA's absorbed sparse
# core and its indexer (by the reuse rule, MTP layers numbering themselves from 1 and copying the last layer's mixer)
CONVENTIONS["megatron_bridge"] = {**CONVENTIONS["megatron_main"], "window_pairs": "bridge", "packed_tokens": "padded",
                                  "dsa_pairs": "bridge", "dsa_core_form": "absorbed", "indexer_flops": True,
                                  "indexer_pairs": "bridge", "indexer_head_reduction": True,
                                  "indexer_train_factor": 0, "mtp_layer_numbering": "own",
                                  "kda_output_gate": "full", "kda_core_state_ops": 4, "indexer_kl_flops": True,
                                  "mla_gate_flops": False, "attn_res_flops": False}


# Where a peer's function takes a branch of its own for a kind of model, the knobs that branch sets on top of the
# convention's bundle (a model's convention_quirks and explicit keys still win). The kinds (``branch_of``):
# 'compressed' (attention_type='compressed') and 'hybrid' (hybrid layer shapes: ffn_layer_pattern).
# - Megatron-Bridge prices DeepSeek-V4's compressed attention by its dsv4_hybrid rule: a flat window and its own
#   top-k and block pairs (compressed_pairs='bridge'), the q latent's and the KV entry's norms, the indexer over the
#   full L x L/m rectangle (indexer_pairs='bridge') without its head weighting and trained 3x whatever the loss, and
#   no mHC.
# - Megatron-LM's and Megatron-Bridge's hybrid path (hybrid_flops) prices an MTP module's layers (the hybrid pattern
#   after '/', once per depth) and its output head, but not its eh projection or norms (their GPT path does).
_HYBRID_MTP = {"mtp_eh_proj": False, "mtp_norm_flops": False}


CONVENTION_BRANCHES = {
    "megatron_bridge": {"compressed": {"compressed_pairs": "bridge", "compressed_norm_flops": True,
                                       "indexer_head_reduction": False, "indexer_train_factor": 3,
                                       "mhc_flops": False, "mhc_head_flops": False},
                        "hybrid": _HYBRID_MTP},
    "megatron_main": {"hybrid": _HYBRID_MTP},
}


# What each convention reproduces, and from which source (the schema's help for 'convention' is built from these).
DESCRIPTIONS = {
    "exact": "this library's count",
    "maxtext": "MaxText 0.2.5's calculate_tflops_training_per_device",
    "megatron": "Megatron-LM as the seed pull requests compute it: #6148's first commit for DSA, #3128 for windows",
    "megatron_main": "Megatron-LM main at d98e8a6, 2026-08-22: no DSA, indexer or window terms",
    "megatron_pr6148": "Megatron-LM #6148's head: top-k scaling at floor(mean length), the indexer by its gradient "
                       "rule",
    "megatron_pr6753": "Megatron-LM #6148's head with the DSA core in the absorbed form",
    "maxtext_pr1988_before": "MaxText before its PR #1988: causal attention as the whole square, windows as global",
    "palm": "PaLM's 6N + 12LHQT (llm-foundry's too): the exact count with attention as the whole square",
    "megatron_papers": "Megatron-LM's papers' model FLOPs, 72 B s l h^2 (1 + s/6h + V/12hl) on a GPT (Korthikanti et al. "
                       "2022, eq. 7): PaLM's count",
    "megatron_papers_selective": "Korthikanti et al. 2022's hardware FLOPs with selective recomputation (eq. 8, "
                                 "s/3h): the attention term counted twice",
    "megatron_papers_full": "Narayanan et al. 2021's hardware FLOPs with full recomputation (eq. 3, 96 B s l h^2 "
                            "(1 + s/6h + V/16lh)): every layer's forward once more, the logits not",
    "six_n": "6N per token with the embedding table in N (Llama 3, GPT-3): the exact count's weights, an untied "
             "token table as one more matmul, no attention",
    "kaplan": "Kaplan et al.'s 6N, N without the vocabulary: the exact count's weights without the output head, no "
              "attention",
    "megatron_bridge": "NVIDIA-NeMo/Megatron-Bridge at 067f987d, its hybrid path: main's rules with its "
                       "sliding-window context and a packed batch's padding priced; models with Mamba layers or "
                       "hybrid layer shapes only",
}
assert set(DESCRIPTIONS) == set(CONVENTIONS), set(DESCRIPTIONS) ^ set(CONVENTIONS)


def convention_help() -> str:
    """The schema's help for 'convention': every convention with what it reproduces."""
    rest = "; ".join(f"'{name}' ({DESCRIPTIONS[name]})" for name in CONVENTIONS if name != "exact")
    return (f"'exact' ({DESCRIPTIONS['exact']}), or a bundle of the knobs below that reproduces a peer's count: "
            f"{rest}. Knobs set explicitly win.")


def knobs_from_choices() -> tuple:
    """Every bundle the library may fill a config's knobs from: each convention, and each 'convention:branch'."""
    return tuple(CONVENTIONS) + tuple(f"{conv}:{branch}" for conv, branches in CONVENTION_BRANCHES.items()
                                      for branch in branches)
