"""The checks of a whole config: relations between keys (``check_relations``), the step's keys alone
(``check_step``), the layer patterns' shapes, and the keys a model does not read (``READ_WHEN``, ``say_inert``:
an ``InertKeyWarning``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from . import terms
from .conventions import EXACT_ONLY, RULED_BY, WEIGHTS_ONLY, bridge_refusal
from .families import FAMILIES, LETTERS, letters_in_use
from .features import FEATURES, inert_rules


def _check_layer_widths(c, err) -> None:
    """Each layer_widths rule parses and names decoder layers; every layer's own heads divide as the config's must;
    its own head width or KV heads on a 'G' layer of a config that gives those layers global_head_dim /
    global_num_kv_heads would be overridden by them, so that is refused."""
    from .plan import layer_widths

    try:
        per_layer = layer_widths(c)
    except ValueError as e:
        err("layer_widths", str(e))
    pattern = c["attention_layer_pattern"]
    for layer, own in enumerate(per_layer):
        if not own:
            continue
        if c["attention_type"] == "mla" and own.keys() & {"num_kv_heads", "head_dim"}:
            err("layer_widths", f"layer {layer}: {sorted(own.keys() & {'num_kv_heads', 'head_dim'})[0]} of its own "
                                "changes nothing with attention_type='mla' (MLA's widths are its own keys)")
        q, kv = own.get("num_query_heads", c["num_query_heads"]), own.get("num_kv_heads", c["num_kv_heads"])
        if q % kv and c["attention_type"] != "mla":
            err("layer_widths", f"layer {layer}: {kv} KV heads do not divide its {q} query heads")
        if c["attention_router_experts"] and q // kv > c["attention_router_experts"]:
            err("layer_widths", f"layer {layer}: its {q} query heads over {kv} KV heads use {q // kv} of the "
                                f"attention_router_experts={c['attention_router_experts']} experts, more than there are")
        if c["attention_differential"] and (q % 2 or kv % 2):
            err("layer_widths", f"layer {layer}: {q} query heads and {kv} KV heads with attention_differential: "
                                "both must be even")
        for key, over in (("head_dim", "global_head_dim"), ("num_kv_heads", "global_num_kv_heads")):
            if key in own and c[over] and pattern[layer % len(pattern)] == "G":
                err("layer_widths", f"layer {layer}: its own {key} on a 'G' layer, whose {key} is {over}="
                                    f"{c[over]}; give the global layers' widths one way")


def check_relations(c: Mapping[str, Any]) -> None:
    """Checks that involve more than one key."""

    def err(key, msg):
        raise ValueError(f"config key {key!r}: {msg}")

    if c["weight_bytes_rules"]:
        from .weights import parse_rule

        for rule in c["weight_bytes_rules"]:
            try:
                parse_rule(rule)
            except ValueError as e:
                err("weight_bytes_rules", str(e))
    if c["num_query_heads"] % c["num_kv_heads"] and c["attention_type"] != "mla":  # (MLA never reads kv heads)
        err("num_kv_heads", f"{c['num_kv_heads']} does not divide num_query_heads={c['num_query_heads']}")
    if c["global_num_kv_heads"] and c["num_query_heads"] % c["global_num_kv_heads"]:
        err("global_num_kv_heads", f"{c['global_num_kv_heads']} does not divide num_query_heads="
                                   f"{c['num_query_heads']}")
    if c["flash_backward_split"] and not c["flash_backward_recompute"]:
        err("flash_backward_split", "true with flash_backward_recompute false: a split flash backward recomputes "
                                    "QK^T in both kernels (set flash_backward_recompute true)")
    if c["layer_widths"]:
        _check_layer_widths(c, err)
    exact = c["convention"] == "exact" or c["convention"] in WEIGHTS_ONLY  # (the exact count's weights)
    for key, what in EXACT_ONLY.items():
        if c[key] and not exact:
            shown = list(c[key]) if isinstance(c[key], tuple) else c[key]
            err("convention", f"{c['convention']!r} has no rule for {what} ({key}={shown!r}); use 'exact'")
    for key, (what, ruled) in RULED_BY.items():
        if c[key] and c["convention"] not in ruled and not exact:
            err("convention", f"{c['convention']!r} has no rule for {what} ({key}={c[key]!r}); use one of "
                              + ", ".join(map(repr, ruled)))
    if c["moe_router_product_keys"]:
        for key in ("zero_experts", "moe_router_shared", "moe_router_mlp_dim"):
            if c[key]:
                err(key, f"{c[key]!r} with moe_router_product_keys: a product-key router scores the routed experts "
                         "only, by two half keys")
        named = terms.product_keys(c["num_experts"])[1]
        if c["num_experts_per_tok"] > named:
            err("num_experts_per_tok", f"{c['num_experts_per_tok']} with moe_router_product_keys: more than the "
                                       f"{named} experts floor(sqrt(num_experts)) half "
                                       "keys pair into")
    if c["num_experts_per_tok"] > c["num_experts"] + c["zero_experts"]:
        err("num_experts_per_tok", f"{c['num_experts_per_tok']} exceeds num_experts={c['num_experts']}"
                                   + (f" + zero_experts={c['zero_experts']}" if c["zero_experts"] else ""))
    if bool(c["num_devices"]) != bool(c["batch_shards"]):
        err("batch_shards" if c["num_devices"] else "num_devices", "give num_devices and batch_shards together (got "
            f"num_devices={c['num_devices']}, batch_shards={c['batch_shards']})")
    if c["batch_shards"] and c["num_devices"] % c["batch_shards"]:
        err("batch_shards", f"{c['batch_shards']} does not divide num_devices={c['num_devices']}")
    if not 1 <= len(c["mlp_activations"]) <= 2:
        err("mlp_activations", f"{list(c['mlp_activations'])!r}: give one activation (plain FFN) or two "
                               "(gated FFN)")
    pattern = c["attention_layer_pattern"]
    if not pattern:
        err("attention_layer_pattern", "'' is empty; use e.g. 'G'")
    for key in ("attention_layer_pattern", "mtp_layer_pattern", "parallel_layer_pattern"):
        for ch in c[key]:
            bare = ch == NO_MIXER_LETTER and (key != "mtp_layer_pattern" or c["mtp_ffn_layer_pattern"])
            if ch not in LETTERS and not bare:
                err(key, f"{c[key]!r} has unknown letter {ch!r}; letters are "
                         + ", ".join(f"{k} ({fam.letters[k]})" for k, fam in LETTERS.items())
                         + (f", {NO_MIXER_LETTER} (no mixer)" if key != "mtp_layer_pattern" else ""))
    check_layer_shapes(c, err)
    n_layers, n_mtp = c["num_decoder_layers"], c["mtp_num_layers"]
    # the letters in use: the decoder's (a cycle of any length) and the MTP modules' (built in train mode, checked
    # in every mode so that one config serves all three)
    used = pattern[:n_layers] if len(pattern) >= n_layers else pattern
    if n_mtp and c["mtp_ffn_layer_pattern"]:  # every module runs every layer of the pattern
        used += c["mtp_layer_pattern"].replace(NO_MIXER_LETTER, "")
    elif n_mtp:
        used += c["mtp_layer_pattern"][:n_mtp] if c["mtp_layer_pattern"] else ""
        if not c["mtp_layer_pattern"] and c["mtp_layer_numbering"] == "after_decoder":
            used += "".join(pattern[(n_layers + k) % len(pattern)] for k in range(min(n_mtp, len(pattern))))
    mtp_letters = used[len(pattern[:n_layers] if len(pattern) >= n_layers else pattern):]

    def err_mtp(key, msg):  # a family's complaint about the MTP modules' letters names their key
        err("mtp_layer_pattern" if key == "attention_layer_pattern" and c["mtp_layer_pattern"] else key, msg)

    parallel = c["parallel_layer_pattern"]
    parallel_used = (parallel[:n_layers] if len(parallel) >= n_layers else parallel).replace(NO_MIXER_LETTER, "")
    for family in FAMILIES:  # each family's own checks, on the letters in use
        if family.conventions and c["convention"] not in family.conventions and c["convention"] not in WEIGHTS_ONLY:
            # a peer with no rule for its layers
            present = [ch for ch in family.letters if ch in used or ch in parallel_used]
            if present:
                where = "attention_layer_pattern" if present[0] in used else "parallel_layer_pattern"
                err("convention", f"{c['convention']!r} has no rule for {next(iter(family.mixers.values()))} "
                                  f"({present[0]!r} layers in {where}={c[where]!r}); use "
                                  + " or ".join(repr(name) for name in family.conventions))
        if family.check is not None:
            family.check(c, used[:len(used) - len(mtp_letters)].replace(NO_MIXER_LETTER, ""), err)
            if parallel_used:
                family.check(c, parallel_used, lambda key, msg: err(
                    "parallel_layer_pattern" if key == "attention_layer_pattern" else key, msg))
            if mtp_letters:
                family.check(c, mtp_letters, err_mtp)
    pattern = used
    for feature in FEATURES:  # each trunk feature's own checks
        if feature.check is not None:
            feature.check(c, err)
    for key in ("warmup_cse_layers", "pipeline_layers"):
        for layer in c[key]:
            if layer >= c["num_decoder_layers"]:
                err(key, f"layer {layer} is past the last decoder layer ({c['num_decoder_layers'] - 1})")
    for key in ("vision_encoder_stages", "vision_projector"):
        for stage in c[key]:
            parts = stage.split(":")
            if len(parts) != 3 or not all(x.isdigit() and int(x) > 0 for x in parts):
                err(key, f"{stage!r} is not 'tokens:in:out' with positive integers")
    n = c["num_decoder_layers"]
    if c["remat_skip_layers"] > n:
        err("remat_skip_layers", f"{c['remat_skip_layers']} exceeds num_decoder_layers={n}")
    if c["remat_block_layers"] > max(n - c["remat_skip_layers"], 1):
        err("remat_block_layers", f"{c['remat_block_layers']} exceeds the {n - c['remat_skip_layers']} rematerialized "
                                  f"layers (num_decoder_layers={n}, remat_skip_layers={c['remat_skip_layers']})")
    if c["attention_output_gate"] and c["attention_type"] not in ("global", "mla"):
        err("attention_output_gate", f"True: the output gate is modelled on GQA and MLA attention, not "
                                     f"attention_type={c['attention_type']!r}")
    if c["attention_head_gate"] and c["attention_type"] not in ("global", "mla"):
        err("attention_head_gate", f"True: a gate per head is modelled on GQA and MLA, not attention_type="
                                   f"{c['attention_type']!r}")
    if c["mode"] != "train" and c["convention"] != "exact":
        err("convention", f"{c['convention']!r} reproduces that project's training FLOPs function; its formulas "
                          f"do not define {c['mode']} (use convention='exact' for mode={c['mode']!r})")
    if c["convention"] == "megatron_bridge":
        refused = bridge_refusal(c)
        if refused:
            err(*refused)
    if c["mode"] == "decode" and not c["causal"]:
        err("causal", "decode needs causal attention")
    check_step(c)


# The step's keys: no relation but check_step's involves them, and no plan reads them (a sweep over them re-checks
# only these; see maxflops.resolve)
STEP_KEYS = frozenset({"max_target_length", "per_device_batch_size", "decode_kv_length", "gradient_accumulation_steps"})


def check_step(c: Mapping[str, Any]) -> None:
    """The relations of the step's keys (STEP_KEYS): the batch a whole number of tokens, a fraction of a sequence
    with denominator up to 2^20, whole in decode."""
    def err(key, msg):
        raise ValueError(f"config key {key!r}: {msg}")

    b = c["per_device_batch_size"]
    if b <= 0:
        err("per_device_batch_size", f"must be positive, got {b!r}")
    if c["num_devices"] and (Fraction(b) * c["num_devices"]).denominator != 1:
        err("per_device_batch_size", f"{b!r} x num_devices={c['num_devices']} is not a whole number of sequences")
    if type(b) is int or (type(b) is float and b.is_integer()):  # whole sequences: every rule below holds
        return
    if c["mode"] == "decode" and not float(b).is_integer():
        err("per_device_batch_size", f"{b!r}: decode adds one token per sequence, so it must be a whole number")
    exact_batch = Fraction(b).limit_denominator(1 << 20)
    if exact_batch == 0 or abs(exact_batch - Fraction(b)) > Fraction(b) / 10**9:
        err("per_device_batch_size", f"{b!r} is not a fraction of a sequence with denominator up to 2^20 (the "
                                     "batch is counted exactly as such a fraction)")
    if c["mode"] != "decode" and (exact_batch * c["max_target_length"]).denominator != 1:
        err("per_device_batch_size", f"{b!r} x max_target_length={c['max_target_length']} must be a whole number "
                                     "of tokens")


NO_MIXER_LETTER = "-"  # attention_layer_pattern: a layer without a mixer (its FFN only)


FFN_LETTERS = {"F": "the dense FFN", "E": "the MoE FFN", "-": "no FFN (a mixer-only layer)"}


def check_layer_shapes(c, err) -> None:
    """ffn_layer_pattern's letters, and that every layer has a mixer or an FFN (or both)."""
    ffn, mixers = c["ffn_layer_pattern"], c["attention_layer_pattern"]
    parallel = c["parallel_layer_pattern"]
    if parallel:
        if c["mtp_num_layers"]:
            err("mtp_num_layers", f"{c['mtp_num_layers']}: MTP modules of a model with parallel_layer_pattern are not "
                                  "modelled")
        for layer in range(c["num_decoder_layers"]):
            if parallel[layer % len(parallel)] != NO_MIXER_LETTER and mixers[layer % len(mixers)] == NO_MIXER_LETTER:
                err("parallel_layer_pattern", f"layer {layer} has a parallel mixer but no first mixer "
                                              f"(attention_layer_pattern={mixers!r}): put it there")
    for ch in ffn:
        if ch not in FFN_LETTERS:
            err("ffn_layer_pattern", f"{ffn!r} has unknown letter {ch!r}; letters are "
                                     + ", ".join(f"{k} ({v})" for k, v in FFN_LETTERS.items()))
    if not ffn:
        if c["mtp_ffn_layer_pattern"]:
            err("mtp_ffn_layer_pattern", f"{c['mtp_ffn_layer_pattern']!r}: MTP layer shapes belong to a model with "
                                         "ffn_layer_pattern (hybrid layer shapes)")
        return
    n = c["num_decoder_layers"]
    if "E" in ffn[:n] and c["num_experts"] < 2:
        err("ffn_layer_pattern", f"{ffn!r} has MoE layers ('E') but num_experts={c['num_experts']}")
    for key, default in (("first_num_dense_layers", 0), ("interleave_moe_layer_step", 1)):
        if c[key] != default:
            err(key, f"{c[key]!r}: ffn_layer_pattern={ffn!r} says each layer's FFN (leave {key} at {default!r})")
    for layer in range(n):
        if mixers[layer % len(mixers)] == NO_MIXER_LETTER and ffn[layer % len(ffn)] == "-":
            err("ffn_layer_pattern", f"layer {layer} has neither a mixer (attention_layer_pattern={mixers!r}) nor an "
                                     f"FFN (ffn_layer_pattern={ffn!r})")
    mtp_mixers, mtp_ffns = c["mtp_layer_pattern"], c["mtp_ffn_layer_pattern"]
    if c["mtp_num_layers"] and not mtp_ffns:
        err("mtp_ffn_layer_pattern", f"'' with mtp_num_layers={c['mtp_num_layers']} and ffn_layer_pattern={ffn!r}: give "
                                     "the layers of an MTP module of a hybrid model (e.g. 'E' beside "
                                     "mtp_layer_pattern='G-'... of the same length)")
    if mtp_ffns:
        for ch in mtp_ffns:
            if ch not in FFN_LETTERS:
                err("mtp_ffn_layer_pattern", f"{mtp_ffns!r} has unknown letter {ch!r}; letters are "
                                             + ", ".join(f"{k} ({v})" for k, v in FFN_LETTERS.items()))
        if len(mtp_mixers) != len(mtp_ffns):
            err("mtp_ffn_layer_pattern", f"{mtp_ffns!r} and mtp_layer_pattern={mtp_mixers!r}: one letter each per "
                                         "layer of an MTP module (the same length)")
        for j, (m, f) in enumerate(zip(mtp_mixers, mtp_ffns)):
            if m == NO_MIXER_LETTER and f == "-":
                err("mtp_ffn_layer_pattern", f"an MTP module's layer {j} has neither a mixer (mtp_layer_pattern="
                                             f"{mtp_mixers!r}) nor an FFN ({mtp_ffns!r})")
        if "E" in mtp_ffns and c["num_experts"] < 2:
            err("mtp_ffn_layer_pattern", f"{mtp_ffns!r} has MoE layers ('E') but num_experts={c['num_experts']}")


class InertKeyWarning(UserWarning):
    """A key set explicitly that no figure of this model reads (a window on a model with no windowed layers)."""


# key -> (does this resolved config read it?, why not). A key given explicitly (a Python override, a CLI flag, a key
# of an ml_collections file) that the model does not read is said (InertKeyWarning); keys a loaded file carries are
# not overrides (a Hugging Face or MaxText file sets what its model has).
_MOE_KEYS = ("shared_experts", "moe_mlp_dim", "num_experts_per_tok", "moe_latent_size", "first_num_dense_layers",
             "interleave_moe_layer_step", "shared_expert_mlp_dim", "shared_expert_gate",
             "moe_impl", "moe_dispatch", "moe_router_scale", "moe_routing_replicas")
# read only by moe_impl='capacity' on a model with routed experts (moe_impl='dense' returns before them)
_CAPACITY_KEYS = ("capacity_factor", "capacity_rule", "moe_down_grad_replicas")


_MLA_KEYS = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


_INDEX_KEYS = ("index_topk", "index_n_heads", "index_head_dim", "index_topk_freq", "index_skip_offset")


def _family_rules() -> dict:
    """From the family registry: a family's own keys are read only where a layer carries one of its letters (in
    the decoder, MTP or parallel patterns). The trunk's families (plain attention, DSA: no letter of their own) and
    the keys another family or the trunk also reads (``Family.shared_keys``) are left out; a rule READ_WHEN names
    after these wins over them.
    tests/core/test_inert_keys.py holds every rule to a recount: a key said inert moves no figure."""
    out = {}
    for fam in FAMILIES:
        if not fam.letters or fam.name == "attention":
            continue
        letters = tuple(fam.letters)
        shown = " / ".join(repr(x) for x in letters)
        for key in fam.keys:
            if key not in fam.shared_keys:
                out[key] = (lambda c, L=letters: any(x in letters_in_use(c) for x in L),
                            f"no layer is {fam.name}'s ({shown} in attention_layer_pattern)")
    return out


READ_WHEN: dict = {
    **_family_rules(),
    **inert_rules(),
    "decode_kv_length": (lambda c: c["mode"] == "decode",
                         "mode is not 'decode': a training or prefill step reads max_target_length (set mode='decode' "
                         "to count a decode step)"),
    **{k: (lambda c: c["mode"] == "train", "mode is not 'train': only a training step runs a backward pass")
       for k in ("flash_backward_split", "recompute_forwards", "recompute_attention_forwards")},
    "gradient_accumulation_steps": (lambda c: c["mode"] == "train",
                                    "mode is not 'train': only a training step accumulates micro-batches"),
    **{k: (lambda c: c["num_experts"] > 1 and c["moe_impl"] == "capacity",
           "it sizes moe_impl='capacity' on a model with routed experts") for k in _CAPACITY_KEYS},
    **{k: (lambda c: c["attention_type"] == "mla", "attention_type is not 'mla'")
       for k in ("mla_absorbed", "mla_norm_flops", "mla_gate_flops", "mla_q_latent_concat")},
    **{k: (lambda c: c["use_sparse_indexer"] and c["attention_type"] == "mla" or "S" in letters_in_use(c),
           "the model runs no DSA indexer (use_sparse_indexer is false, or attention_type is not 'mla', and no layer "
           "is 'S')")
       for k in ("indexer_loss_scaling_factor", "dsa_impl", "dsa_pairs", "dsa_core_form")},
    "sliding_window_size": (lambda c: any(x in letters_in_use(c) for x in "LSH"),
                            "no layer of attention_layer_pattern (or the MTP / parallel patterns) is windowed ('L', or "
                            "compressed 'S' / 'H')"),
    "chunk_attn_window_size": (lambda c: "C" in letters_in_use(c), "no layer is chunked ('C' in attention_layer_pattern)"),
    "patch_cross_k": (lambda c: any(x in letters_in_use(c) for x in "YU"),
                      "no layer is the patch family's cross-attention ('Y' or 'U' in attention_layer_pattern)"),
    **{k: (lambda c: c["num_experts"] > 1, "the model has no routed experts (num_experts = 1)") for k in _MOE_KEYS},
    **{k: (lambda c: c["attention_type"] == "mla", "attention_type is not 'mla'") for k in _MLA_KEYS},
    "q_lora_rank": (lambda c: c["attention_type"] == "mla" or any(x in letters_in_use(c) for x in "SH"),
                    "attention_type is not 'mla' and no layer is compressed ('S' / 'H')"),
    "dead_compressor": (lambda c: any(x in letters_in_use(c) for x in "SH"), "no layer is compressed ('S' / 'H')"),
    **{k: (lambda c: c["use_sparse_indexer"] or "S" in letters_in_use(c),
           "the model runs no indexer (use_sparse_indexer is false and no layer is 'S')") for k in _INDEX_KEYS},
    **{k: (lambda c: c["use_sparse_indexer"] or any(x in letters_in_use(c) for x in "SBQ"),
           "the model runs no indexer (use_sparse_indexer is false and no layer is 'S', 'B' or 'Q')")
       for k in ("index_n_heads", "index_head_dim")},
    **{k: (lambda c: "B" in letters_in_use(c), "no layer is MiniMax sparse attention ('B' in attention_layer_pattern)")
       for k in ("msa_block_size", "msa_topk_blocks", "msa_local_blocks", "msa_impl")},
    **{k: (lambda c: "Q" in letters_in_use(c), "no layer is QSA ('Q' in attention_layer_pattern)")
       for k in ("qsa_block_size", "qsa_budget", "qsa_impl")},
    **{k: (lambda c: "E" in letters_in_use(c), "no layer is LSH attention ('E' in attention_layer_pattern)")
       for k in ("lsh_chunk_length", "lsh_chunks_before", "lsh_num_hashes", "lsh_hash_width")},
    "lsh_max_positions": (lambda c: "E" in letters_in_use(c) and not c["lsh_hash_width"],
                          "no LSH layer ('E') sets its hash width from the sequence length (lsh_hash_width = 0)"),
    **{k: (lambda c: "O" in letters_in_use(c), "no layer is chunked local attention ('O' in attention_layer_pattern)")
       for k in ("local_chunk_length", "local_chunks_before")},
    "indexer_loss_pairs": (lambda c: c["use_sparse_indexer"] and c["attention_type"] == "mla"
                           and c["indexer_loss_scaling_factor"] > 0 and c["mode"] == "train",
                           "it shapes the DSA indexer's KL loss in training (MLA with use_sparse_indexer and "
                           "indexer_loss_scaling_factor > 0)"),
    **{k: (lambda c: "V" in letters_in_use(c), "no layer is a short conv ('V' in attention_layer_pattern)")
       for k in ("short_conv_kernel", "short_conv_impl")},
    "relative_logits_extent": (lambda c: c["relative_logits_dim"] > 0 and any(x in letters_in_use(c) for x in "GC"),
                               "no global or chunked layer has relative-position logits (relative_logits_dim = 0)"),
    "aux_conv_impl": (lambda c: c["kv_conv_kernel"] > 0 or c["residual_conv_kernel"] > 0 or
                      c["cca_depthwise_kernel"] > 0 or bool(c["engram_layers"]),
                      "the model has no convs around attention (kv_conv_kernel, residual_conv_kernel and "
                      "cca_depthwise_kernel are 0) and no Engram layer"),
    "kv_conv_dynamic_layers": (lambda c: any(x in letters_in_use(c) for x in c["kv_conv_dynamic_layers"]),
                               "no layer has a letter it names"),
    "dynamic_conv_impl": (lambda c: c["kv_conv_kernel"] > 0 and any(x in letters_in_use(c)
                                                                   for x in c["kv_conv_dynamic_layers"]),
                          "no layer's key and value convs take per-token taps (kv_conv_dynamic_layers)"),
    "moe_router_mlp_dim": (lambda c: c["num_experts"] > 1, "the model has no routed experts (num_experts = 1)"),
    "moe_router_product_keys": (lambda c: c["num_experts"] > 1, "the model has no routed experts (num_experts = 1)"),
    "moe_experts_ungated": (lambda c: c["num_experts"] > 1 and len(c["mlp_activations"]) == 2,
                            "the model has no routed experts, or its FFNs are ungated already"),
    "moe_router_shared": (lambda c: c["num_experts"] > 1 and c["shared_experts"] > 0,
                          "the model has no shared experts beside routed ones"),
    "cross_attention_tokens": (lambda c: "X" in c["attention_layer_pattern"],
                               "no cross-attention layer ('X' in attention_layer_pattern)"),
    "attention_router_experts": (lambda c: c["attention_type"] == "global" and any(x in letters_in_use(c) for x in "GLC"),
                                 "no GQA attention layer ('G', 'L' or 'C' with attention_type='global')"),
    "differential_impl": (lambda c: c["attention_differential"] and any(x in letters_in_use(c) for x in "GLC"),
                          "no attention layer is differential (attention_differential is false, or no 'G', 'L' or "
                          "'C' layer)"),
}


def inert_widths(c: Mapping[str, Any]) -> list:
    """The layer_widths rules that change nothing, each with why: a dense FFN width on a layer without one, an expert
    width on a layer without experts, an attention width on a layer without a mixer."""
    from .plan import ffn_kind, parse_width_rule

    pattern, n = c["attention_layer_pattern"], c["num_decoder_layers"]
    out = []
    for rule in c["layer_widths"]:
        key, spans, _ = parse_width_rule(rule)
        layers = [l for lo, hi in spans for l in range(lo, min(hi, n - 1) + 1)]
        if key == "mlp_dim":
            idle, why = [l for l in layers if ffn_kind(l, c) != "dense"], "no dense FFN"
        elif key == "moe_mlp_dim":
            idle, why = [l for l in layers if ffn_kind(l, c) != "moe"], "no routed experts"
        else:
            idle, why = [l for l in layers if pattern[l % len(pattern)] == NO_MIXER_LETTER], "no mixer"
        if idle and len(idle) == len(layers):
            out.append((rule, f"layer{'s' if len(idle) > 1 else ''} {', '.join(map(str, idle))}: {why}"))
    return out


def say_inert(c: Mapping[str, Any], keys) -> None:
    """Warn (InertKeyWarning) for each of ``keys``, set explicitly, that the resolved config ``c`` does not read."""
    import warnings

    for key in keys:
        rule = READ_WHEN.get(key)
        if rule is not None and not rule[0](c):
            warnings.warn(f"config key {key!r} = {c[key]!r} changes nothing here: {rule[1]}", InertKeyWarning,
                          stacklevel=4)
        if key == "layer_widths" and c["layer_widths"]:
            for entry, why in inert_widths(c):
                warnings.warn(f"config key 'layer_widths' rule {entry!r} changes nothing here: {why}",
                              InertKeyWarning, stacklevel=4)
