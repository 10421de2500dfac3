"""The conventions' rules: the knobs each peer's way of counting sets (``CONVENTIONS``, data in
:mod:`maxflops.peers`), their branches by model kind (``CONVENTION_BRANCHES``, ``branch_of``, ``bundle``), where a
convention has a rule for a model at all (``convention_defined``, ``bridge_refusal``), per-model quirks (``quirks``), and which knobs only say how a peer
reports (``REPORTING_KNOBS``) or may lower hardware below model FLOPs (``HARDWARE_BELOW_MODEL``)."""

from __future__ import annotations

from typing import Any, Mapping

from .families import LETTERS
from .peers import CONVENTION_BRANCHES, CONVENTIONS, WEIGHTS_ONLY  # noqa: F401 (the bundles, as data)
from .schema import SCHEMA, check_value, coerce


def branch_of(convention: str, values: Mapping[str, Any]) -> str:
    """The branch ``convention`` takes for this kind of model (see CONVENTION_BRANCHES): '' for none."""
    kind = "compressed" if values.get("attention_type") == "compressed" else \
        "hybrid" if values.get("ffn_layer_pattern") else ""
    return kind if kind in CONVENTION_BRANCHES.get(convention, {}) else ""


def bundle(convention: str, branch: str) -> dict[str, Any]:
    """The knobs a convention sets for a model of this kind (``branch_of``): its bundle and its branch (if any)."""
    knobs = CONVENTION_BRANCHES.get(convention, {}).get(branch)
    return {**CONVENTIONS[convention], **knobs} if knobs else CONVENTIONS[convention]


def convention_defined(c, convention: str | None = None) -> bool:
    """Whether ``convention`` (default: the config's own) has a rule for every layer of this model: Megatron-Bridge's
    (``bridge_refusal``), and each family's list of the conventions that price its layers (Kimi delta attention:
    exact and Megatron-Bridge only). A config under a convention that is not defined is refused by its check."""
    convention = convention or c["convention"]
    if convention in WEIGHTS_ONLY:  # (the exact count's weights: defined wherever it is)
        convention = "exact"
    if convention == "megatron_bridge" and bridge_refusal(c):
        return False
    if convention != "exact" and any(c[key] for key in EXACT_ONLY):  # no peer prices these
        return False
    if any(c[key] and convention not in ruled for key, (_, ruled) in RULED_BY.items()):
        return False
    letters = set(c["attention_layer_pattern"]) | set(c["mtp_layer_pattern"]) | set(c["parallel_layer_pattern"])
    return all(not LETTERS[ch].conventions or convention in LETTERS[ch].conventions for ch in letters if ch in LETTERS)


# Features no peer's function has a rule for (key -> what it is): a config with one is refused under any convention
# but 'exact' (checks.check_relations) and no convention is defined for it (convention_defined)
EXACT_ONLY = {"zero_experts": "zero-computation experts", "layer_widths": "layers of their own widths",
              "layer_loops": "looped depth", "prompt_tokens": "prompt tokens ahead of every sequence",
              "attention_differential": "differential attention",
              "attention_router_experts": "a mixture of attention heads",
              "mla_q_latent_concat": "a q up-projection over the normed and raw q latent",
              "gated_norm_rank": "gated norms", "relative_logits_dim": "relative-position logits",
              "kv_conv_kernel": "convs over the keys and values", "residual_conv_kernel": "convs over the branches' "
                                                                                          "outputs",
              "moe_router_shared": "a router that scores the shared experts", "altup_num_inputs": "AltUp streams", "moe_router_mlp_dim": "an MLP router",
              "cca_depthwise_kernel": "compressed convolutional attention",
              "dynamic_mask_keys": "dynamic-mask attention", "moe_router_product_keys": "a product-key router",
              "moe_experts_ungated": "ungated experts beside gated FFNs",
              "laurel_rank": "LAuReL branches", "attention_sink_proj": "attention sinks projected from the input",
              "kv_conv_dynamic_layers": "convs of per-token taps over the keys and values",
              "loop_message_rank": "messages between looped passes",
              "attn_res_qkv_layers": "attention residuals with an aggregate each for queries, keys and values",
              "mhc_plain_residual": "hyper-connections without the residual mixing",
              "mhc_lowrank": "gated hyper-connections", "patch_layers": "layers over a patch stream",
              "frozen_layers": "frozen layers"}
# Features only some peers have a rule for (key -> (what it is, the conventions that price a model with it))
RULED_BY = {"attn_res_block_size": ("attention residuals", ("exact", "megatron_bridge"))}


def bridge_refusal(c) -> tuple | None:
    """(key, why) where Megatron-Bridge's function has no rule for this model, else None. Its DeepSeek-V4 rule (the
    dsv4_hybrid variant) knows compression ratios 4 (with the indexer) and 128 only, every other layer a window layer,
    one KV head, the q latent and the grouped low-rank output."""
    if c["attention_type"] != "compressed":
        return None
    letters = set(c["attention_layer_pattern"]) | set(c["mtp_layer_pattern"])
    rule = "under 'megatron_bridge': its DeepSeek-V4 rule (the dsv4_hybrid variant)"
    if "G" in letters:
        return "attention_layer_pattern", f"'G' layers with attention_type='compressed' {rule} has none"
    if "S" in letters and c["csa_compress_ratio"] != 4:
        return "csa_compress_ratio", f"{c['csa_compress_ratio']} {rule} prices ratio 4 only"
    if "S" in letters and not c["use_sparse_indexer"]:
        return "use_sparse_indexer", f"False {rule} always runs the indexer on its ratio-4 layers"
    if "H" in letters and c["hca_compress_ratio"] != 128:
        return "hca_compress_ratio", f"{c['hca_compress_ratio']} {rule} prices ratio 128 only"
    for key, ok in (("num_kv_heads", c["num_kv_heads"] == 1), ("q_lora_rank", c["q_lora_rank"] > 0),
                    ("o_groups", c["o_groups"] > 0)):
        if not ok:
            return key, f"{c[key]} {rule} has one KV head, the q latent and a grouped output"
    return None


def quirks(entries, convention: str) -> dict[str, Any]:
    """The knobs that ``convention_quirks`` entries ('convention:key=value') set under ``convention``."""
    out = {}
    for entry in entries:
        conv, sep, rest = entry.partition(":") if isinstance(entry, str) else ("", "", "")
        key, eq, value = rest.partition("=")
        if not (sep and eq) or conv not in CONVENTIONS or key not in SCHEMA or key in _NOT_KNOBS:
            raise ValueError(f"config key 'convention_quirks': {entry!r} is not 'convention:key=value' with a "
                             f"convention of {', '.join(CONVENTIONS)} and a knob of the schema")
        try:  # every entry's value is checked, whichever convention it belongs to
            coerced = coerce(key, value)
            check_value(key, coerced)
        except ValueError as e:
            raise ValueError(f"config key 'convention_quirks': entry {entry!r}: {e}") from None
        if conv == convention:
            out[key] = coerced
    return out


_NOT_KNOBS = frozenset({"convention", "convention_knobs_from", "convention_quirks"})


# The implementation knobs under which hardware FLOPs can fall below model FLOPs (every other knob only adds work);
# the README lists each (tests/house/test_docs.py checks it), the property tests exempt exactly these.
HARDWARE_BELOW_MODEL = {
    "capacity_factor": "below 1 with moe_impl='capacity' (tokens are dropped)",
    "mla_absorbed": "True (the kv latent may be narrower than the heads)",
    "outer_product_grads": "'elementwise' (train)",
    "weighted_sum_impl": "'elementwise' or 'streams_elementwise'",
    "dynamic_conv_impl": "'elementwise' (a dynamic conv's taps, no matmul)",
    "indexer_skip_short": "True",
    "packed_kernel": "'row' on chunked layers, documents that do not fill whole rows",
    "warmup_dead_last_layer": "True (the DSA warm-up drops the last layer's work its loss does not read)",
    "dead_compressor": "either value where no sequence of the step reaches a compressed layer's ratio (its compressor "
                       "runs forward only, or not at all, while the model counts it)",
}


# Knobs that say how a peer reports, never what a program runs: every key a convention bundle sets, and the
# reporting-only knobs MaxText's per-model quirks use. Hardware FLOPs read each at its default (resolve.hardware_view).
REPORTING_KNOBS = frozenset(k for knobs in CONVENTIONS.values() for k in knobs) | frozenset(
    k for branches in CONVENTION_BRANCHES.values() for knobs in branches.values() for k in knobs) | frozenset(
    {"mhc_flops", "mhc_head_flops", "indexer_proj_split", "mamba_scan_flops", "mamba1_scan_flops"})
