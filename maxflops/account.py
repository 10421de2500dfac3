"""Plan + terms + masks -> a Breakdown: each layer kind priced (model and hardware), the mode, gradient
accumulation, conventions. The train multipliers are ``maxflops.training``'s; resolution is ``maxflops.resolve``'s.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from . import stepform, terms
from .sequences import Packed, Uniform, as_lengths, batch, patch_stream, priced_tokens, program_batch, uses_patches
from .breakdown import Breakdown, make_breakdown
from .components import ATTENTION
from .families import Priced, family_of, ffn_width
from .features import FEATURES, PRICED
from .families.base import NO_FFN, NO_MIXER
from .plan import LayerKind, layer_view
from .resolve import call_key, from_source, hardware_view, plan_of, resolve_call, resolve_key
from .training import (INDEXER_COMPONENTS, REMAT_SAVES, WARMUP_CSE, WARMUP_REMAT, hardware_train_flops, head_passes,
                       recomputed, train_factor, warmup)


# --- pricing one layer kind -------------------------------------------------------------------------------

def price_forward(kind: LayerKind, c, seqs, decode: bool, hardware: bool = False) -> Priced:
    """One layer kind's forward FLOPs by component (``out``), with what its training prices need: the QK^T part of
    its core attention, the 'tail', 'single' and 'unnamed' parts by component, and hardware's ``grad_extra``.

    The tail is the matmuls whose outputs are only added into the layer's output (the dense FFN's down
    projection; a shared expert's without its gate; in a layer without an FFN, the mixer's last matmul, its
    ``closing`` part): a rematerialized layer does not recompute them, because its backward pass needs their
    inputs, not their outputs. (The attention output feeds the FFN's norm, and routed experts' outputs are scaled by
    router weights, so those are recomputed.)

    The single parts are matmuls one of whose operand gradients contracts nothing (an outer product) or is not
    needed: the indexer's weighted sum over its heads, the gated delta net's state reads, the dense MoE path's
    router-weighted sum over experts, the one-hot MoE dispatch (its mask takes no gradient), the shared experts'
    gate D -> 1. Model FLOPs count
    every backward as two matmuls; hardware FLOPs follow ``outer_product_grads``.

    Model FLOPs (``hardware=False``) follow the convention knobs and may hold Fractions. Hardware FLOPs
    (``hardware=True``, ``c`` an exact view of the config) follow the implementation knobs. The mixer is priced by
    its family (``maxflops.families``: ``price`` / ``price_hardware``); the FFN and the extras here.
    """
    p = Priced()
    c = layer_view(c, kind)  # a layer of its own widths (layer_widths)
    if kind.patches:  # a layer over the patch stream (BLT's global transformer)
        seqs, c = patch_stream(seqs, c)
    tokens = seqs.count if decode else priced_tokens(seqs, c)[0]
    if kind.mixer != NO_MIXER:
        family = family_of(kind)
        (family.price_hardware if hardware else family.price)(p, kind, c, seqs, decode, tokens)
    if kind.parallel is not None:  # a second mixer on the same input, summed into the first's output
        side = Priced()
        family = family_of(kind.parallel)
        (family.price_hardware if hardware else family.price)(side, kind.parallel, c, seqs, decode, tokens)
        _merge(p, side)
    if kind.ffn != NO_FFN:
        _ffn(p, kind, c, seqs, decode, tokens, hardware)
    else:  # a mixer-only layer: the mixer's last matmul only joins the layer's output
        p.tail.update(p.closing)
    _extras(p, kind, c, seqs, decode, tokens, hardware)
    return p


def _merge(p: Priced, side: Priced) -> None:
    """Add a parallel mixer's priced parts into the layer's, component by component."""
    for name in ("out", "tail", "single", "unnamed", "grad_extra", "closing", "warmup_unnamed"):
        mine, theirs = getattr(p, name), getattr(side, name)
        for k, v in theirs.items():
            mine[k] = mine.get(k, 0) + v
    p.qk += side.qk
    p.forward_only |= side.forward_only


def _ffn(p: Priced, kind: LayerKind, c, seqs, decode, tokens, hardware) -> None:
    d_ffn = ffn_width(c)
    gated = len(c["mlp_activations"]) == 2
    post_norm = c["post_ffn_norm"]  # a norm on the FFN output needs the last matmul's output back: no tail
    if kind.ffn != "moe":
        width = c["mlp_dim"] * (2 if kind.kv_shared and c["double_wide_kv_shared_mlp"] else 1)
        p.out["mlp"] = terms.mlp(d_ffn, width, gated) * tokens
        if not post_norm:
            p.tail["mlp"] = terms.mlp_down(d_ffn, width) * tokens
        return
    if c["router_flops"]:
        scored = c["num_experts"] + c["zero_experts"] + (c["shared_experts"] if c["moe_router_shared"] else 0)
        R = c["moe_router_mlp_dim"]  # ZAYA's router: D -> R, an MLP of two R -> R, then R -> the scored experts
        if c["moe_router_product_keys"]:  # Doge's product keys: D -> 2 x floor(sqrt(E)) (two half-key scores)
            scored = 2 * terms.product_keys(c["num_experts"])[0]
        p.out["moe_router"] = (terms.router(R, scored) + 2 * d_ffn * R + 2 * 2 * R * R if R else
                               terms.router(d_ffn, scored)) * tokens
    d_exp = c["moe_latent_size"] or d_ffn  # the routed experts' width: a latent MoE's projected space
    per_expert_token = terms.mlp(d_exp, c["moe_mlp_dim"], gated and not c["moe_experts_ungated"])
    if hardware and c["moe_impl"] != "ideal":
        _hardware_moe(p, c, seqs, decode, tokens, per_expert_token, d_exp)
    else:
        p.out["moe_routed"] = per_expert_token * routed_slots(c, tokens)
        if hardware and c["moe_dispatch"] == "einsum":  # MaxText's sparse path sums each token's k expert outputs
            # with the router's weights as a matmul ("BKE,BK->BE"): its gradient reaches the weights by a matmul,
            # the outputs by a product
            k = c["num_experts_per_tok"]
            p.out["moe_weighted_sum"] = p.single["moe_weighted_sum"] = 2 * k * d_exp * tokens
            if not post_norm:
                p.tail["moe_weighted_sum"] = p.out["moe_weighted_sum"]
    if hardware and c["moe_router_scale"] == "input" and not post_norm:  # the experts' outputs are only summed
        p.tail["moe_routed"] = p.out["moe_routed"] * Fraction(terms.mlp_down(d_exp, c["moe_mlp_dim"]), per_expert_token)
    if c["moe_latent_size"]:  # D -> latent before the experts, latent -> D after them: every token, once
        p.out["moe_latent_proj"] = terms.latent_proj(d_ffn, d_exp) * tokens
        if not post_norm:  # latent -> D, the last matmul
            p.tail["moe_latent_proj"] = terms.latent_proj(d_ffn, d_exp) // 2 * tokens
    if c["shared_experts"]:
        gate = terms.shared_gate(d_ffn) if c["shared_expert_gate"] and c["shared_expert_gate_flops"] else 0
        width = c["shared_expert_mlp_dim"] or c["moe_mlp_dim"]
        p.out["moe_shared"] = (c["shared_experts"] * terms.mlp(d_ffn, width, gated) + gate) * tokens
        if gate:  # D -> 1: its input gradient contracts nothing, and no remat policy name covers it
            p.single["moe_shared"] = gate * tokens
            if hardware:
                p.unnamed["moe_shared"] = gate * tokens
        if not gate and not post_norm:
            p.tail["moe_shared"] = c["shared_experts"] * terms.mlp_down(d_ffn, width) * tokens


def routed_slots(c, tokens):
    """Top-k slots that run a routed expert: every slot, or with zero-computation experts the share of them that
    zero_expert_share leaves to the real experts (an expected count, a Fraction: the component is rounded to the
    FLOP once, as a convention's fractions are)."""
    slots = c["num_experts_per_tok"] * tokens
    if not c["zero_experts"]:
        return slots
    share = c["zero_expert_share"]
    share = (Fraction(c["zero_experts"], c["num_experts"] + c["zero_experts"]) if share < 0
             else Fraction(share).limit_denominator(1 << 30))
    return Fraction(slots) * (1 - share)


def _hardware_moe(p: Priced, c, seqs, decode, tokens, per_expert_token, d_ffn) -> None:
    """The routed experts as moe_impl runs them, with moe_dispatch's one-hot matmuls where the program uses them
    (``d_ffn``: the width the experts take and give, a latent MoE's latent)."""
    E, einsum = c["num_experts"], c["moe_dispatch"] == "einsum"
    if c["moe_impl"] == "ragged_dense":  # every routed row against every expert (XLA-CPU's lax.ragged_dot)
        p.out["moe_routed"] = E * c["num_experts_per_tok"] * per_expert_token * tokens
        return
    if c["moe_impl"] == "dense":  # every expert runs every token; the router's weights sum them (a matmul over E)
        p.out["moe_routed"] = E * per_expert_token * tokens
        if einsum:
            p.out["moe_weighted_sum"] = p.single["moe_weighted_sum"] = 2 * E * d_ffn * tokens
            if not c["post_ffn_norm"]:
                p.tail["moe_weighted_sum"] = p.out["moe_weighted_sum"]
            if c["moe_router_scale"] == "input":  # constant one-hot weights: no gradient for them
                p.grad_extra["moe_weighted_sum"] = -p.out["moe_weighted_sum"]
        return
    # capacity: per dispatch group every expert runs C slots, dispatched and combined one-hot
    group, groups = _dispatch_groups(c, seqs, decode)
    slots = terms.capacity_slots(group, c["num_experts_per_tok"], E, c["capacity_factor"], c["capacity_rule"])
    p.out["moe_routed"] = E * slots * per_expert_token * groups
    if c["moe_down_grad_replicas"] > 1:  # backward only: the down projection's input gradient, once more per replica
        down = terms.mlp_down(d_ffn, c["moe_mlp_dim"])
        p.grad_extra["moe_down_grad_replicated"] = (c["moe_down_grad_replicas"] - 1) * E * slots * down * groups
    if einsum:
        one = terms.moe_dispatch(group, E, slots, d_ffn) * groups
        p.out["moe_dispatch"], p.out["moe_combine"] = one, one
        p.single["moe_dispatch"] = one  # the one-hot mask takes no gradient
        if not c["post_ffn_norm"]:
            p.tail["moe_combine"] = one


def _extras(p: Priced, kind: LayerKind, c, seqs, decode, tokens, hardware) -> None:
    """What a layer adds around its mixer and FFN: the up-projection of a latent FFN, then each trunk feature's part
    (maxflops.features, in their order: per-layer embeddings, Engram, mHC, LAuReL, AltUp, residual convs, gated
    norms, attention residuals, looped depth's messages, a patcher's head, an MTP module's own matmuls)."""
    d, d_ffn = c["emb_dim"], ffn_width(c)
    if d_ffn != d:  # the layer closes with an up-projection to D; the FFN's outputs feed it (no other tail)
        p.out["layer_up_proj"] = 2 * d_ffn * d * tokens
        p.tail = {"layer_up_proj": p.out["layer_up_proj"]}
    for f in PRICED:
        f.price(p, kind, c, seqs, decode, tokens, hardware)


def _dispatch_groups(c, seqs, decode: bool):
    """(tokens per MoE dispatch group, groups): a group is one row of max_target_length token slots (packed
    documents share their rows; ``per_device_batch_size`` rows); in decode, the batch's new tokens."""
    if decode:
        return seqs.count, 1
    return c["max_target_length"], program_batch(c)


HEADS = tuple(f for f in FEATURES if f.head is not None)

# Components of an MTP row outside its transformer layer (not recomputed by layer remat).
_OUTSIDE_LAYER = frozenset({"mtp_eh_proj", "mtp_norm", "logits", "mhc_head"})


def price_hardware(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict[str, int]:
    """Hardware FLOPs of one row of this kind for the whole step (``c``: the exact view of the config), each
    component rounded to an integer (see ``hardware_raw``)."""
    return {k: _to_int(v) for k, v in hardware_raw(kind, c, seqs, decode, steps).items()}


# The MoE's token routing: matmuls over the tokens and the model width only (no expert hidden width), which a mesh
# whose residual stream is whole over an axis cannot split over it (moe_routing_replicas).
MOE_ROUTING = ("moe_router", "moe_dispatch", "moe_combine", "moe_weighted_sum")


def hardware_raw(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    """Hardware FLOPs of one row of this kind for the whole step, unrounded (see ``_hardware_step``), with the MoE
    routing's replicas on a mesh that repeats it (``moe_routing_replicas``) and a pipelined layer's bubble."""
    out = _hardware_step(kind, c, seqs, decode, steps)
    if c["moe_routing_replicas"] > 1:
        routing = sum(out[k] for k in MOE_ROUTING if k in out)
        if routing:
            out["moe_routing_replicated"] = (c["moe_routing_replicas"] - 1) * routing
    if kind.pipelined:  # each stage also runs its layers in the stages - 1 bubble iterations
        S, R = c["pipeline_stages"], c["pipeline_repeats"]
        M = c["pipeline_microbatches"] or S
        out["pipeline_bubble"] = sum(out.values()) * Fraction((S - 1) * (2 if c["pipeline_delay"] else 1), R * M)
    return out


def _hardware_step(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    """Hardware FLOPs of one row of this kind for the whole step (``c``: the exact view of the config), unrounded.

    Train: each component's model multiplier, plus under a remat policy one more forward of every layer matmul
    the policy does not save, except the tail (see ``price_forward``), plus one QK^T forward under
    ``flash_backward_recompute``.
    """
    p = price_forward(kind, c, seqs, decode, hardware=True)
    fwd, qk, tail, single, unnamed = p.out, p.qk, p.tail, p.single, p.unnamed
    if kind.inner:  # its output feeds the next layer of its rematerialized unit: nothing is a tail
        tail = {}
    if c["remat_policy"] == "reversible":  # a reversible layer runs its whole forward again, but for what its
        tail = {k: v for k, v in tail.items() if k in p.forward_only}  # forward kept and no gradient reads
    if c["mode"] != "train" or kind.no_grad:  # (a pass without a gradient: its forward, nothing recomputed)
        return {k: v * steps for k, v in fwd.items()}
    saved = REMAT_SAVES.get(c["remat_policy"])
    wi_share = Fraction(2, 3) if len(c["mlp_activations"]) == 2 else Fraction(1, 2)
    if kind.mtp and not c["remat_mtp"] or kind.no_remat:
        saved = None
    # Warm-up: the backward pass recomputes only what the indexer's gradient needs (see WARMUP_REMAT).
    # Warm-up, a layer outside a loop: the last one's unread work is dropped; a layer scanned alone has part of its
    # recompute merged with its forward.
    recompute, dead, merged = (WARMUP_REMAT, kind.dead, WARMUP_CSE if kind.cse else frozenset()) if warmup(c) \
        else (None, False, frozenset())
    if recompute is not None:
        unnamed = {**unnamed, **p.warmup_unnamed}  # of the unnamed parts, only what the indexer's loss reads
        if not kind.computes_index or c["indexer_loss_scaling_factor"] == 0:
            saved = None
    out = {}
    for k, v in fwd.items():
        if dead and k not in WARMUP_REMAT:
            continue
        # forward only: once, unless nothing of the step runs it at all (the DSA warm-up with no loss: 0x)
        total = (v if train_factor(k, c) else 0) if k in p.forward_only else \
            hardware_train_flops(k, v, single.get(k, 0), c)
        if k in p.grad_extra and train_factor(k, c) == 3 and k not in p.forward_only:
            total += p.grad_extra[k]
        if saved is not None and not (kind.mtp and k in _OUTSIDE_LAYER) and (recompute is None or k in recompute) \
                and k not in merged:
            total += recomputed(k, v, qk, tail.get(k, 0), saved, wi_share, unnamed.get(k, 0))
        if k == "core_attention" and c["flash_backward_recompute"] and train_factor(k, c) == 3:
            total += qk + (v if c["flash_backward_split"] else 0)  # split: the dq kernel's QK^T and dO V^T
        out[k] = total * steps
    for k in p.grad_extra.keys() - fwd.keys():  # backward-only work (its own component)
        out[k] = p.grad_extra[k] * steps
    return out


# --- the count --------------------------------------------------------------------------------------------

def _to_int(x) -> int:
    return x if isinstance(x, int) else round(x)


def _rounded(raw: dict) -> dict:
    """Each component to the FLOP (half to even): a convention's Fractions, once per component and step."""
    if set(map(type, raw.values())) <= _INT:
        return raw
    return {k: v if type(v) is int else round(v) for k, v in raw.items()}


_INT = {int}


def count(config, segment_lengths: Sequence[int] | Any = None, **overrides) -> Breakdown:
    """Exact per-device per-step FLOPs of ``config``.

    ``segment_lengths``: the real document lengths of one micro-batch on this device (packed THD); every
    mask restarts at a document start and padding is not counted. Without it the batch is
    ``per_device_batch_size`` full sequences of ``max_target_length``. In decode mode it gives each sequence's
    KV-cache length instead of ``decode_kv_length``. ``overrides`` replace config keys for this count only
    (validated; e.g. ``count(cfg, max_target_length=L)`` in a sweep).
    """
    key = call_key(config, overrides)
    if segment_lengths is None:  # a Breakdown is immutable: the same call returns the same one
        hit = _COUNTS.get(key)
        if hit is None and key[1]:
            hit = stepform.step_count(key, _price_step, _hardware_parts)
        if hit is not None:
            _store(key, hit)
            return hit
    c, plan = resolve_key(key)
    mode = c["mode"]
    decode = mode == "decode"
    prompt = c["prompt_tokens"]  # run ahead of every sequence by the layers, not the head
    if segment_lengths is not None and c["patches_per_sequence"] and uses_patches(c):
        raise ValueError(f"config key 'patches_per_sequence': {c['patches_per_sequence']} with segment_lengths: a "
                         "stated patch count is a sequence's; packed documents are priced with 0 (L + 1 patches "
                         "each)")
    if segment_lengths is not None and prompt:
        raise ValueError(f"config key 'prompt_tokens': {prompt} with segment_lengths: packed documents with prompt "
                         "tokens ahead of each sequence are not modelled")
    if segment_lengths is not None:
        seqs = Packed(as_lengths(segment_lengths, c))
    elif decode:
        seqs = Uniform(c["decode_kv_length"], batch(c))
    else:
        seqs = Uniform(c["max_target_length"], batch(c))
    steps = c["gradient_accumulation_steps"] if mode == "train" else 1
    train = mode == "train"
    run = Uniform(seqs.length + prompt, seqs.count) if prompt else seqs  # what the layers run

    priced = [_rounded(model_raw(kind, c, run, decode, steps)) for kind in plan.kinds]
    tokens = seqs.count if decode else seqs.tokens
    head = _head(c, (tokens if decode else priced_tokens(seqs, c)[0]) * head_passes(c, steps))
    if c["vision_layers"]:
        head.update(_vision(c, mode, steps))

    def hardware():  # evaluated on first use of Breakdown.hardware_*: its own view, plan and head
        return _hardware_parts(c, seqs, tokens, segment_lengths is not None, steps)

    b = make_breakdown(c["model_name"], mode, c["convention"], _to_int(tokens * steps), plan, priced, head,
                       hardware, c["not_priced"])
    if segment_lengths is None:
        _store(key, b)
    return b


def _store(key, b: Breakdown) -> None:
    if len(_COUNTS) >= 32:  # the calls a step loop repeats; a bigger store costs every new count more (its
        _COUNTS.clear()     # Breakdowns' memory is not reused while they are held: measured 256 at +30%)
    _COUNTS[key] = b


def _hardware_parts(c, seqs, tokens, packed: bool, steps: int) -> tuple:
    """(plan, priced rows, head) of hardware FLOPs: the config's exact view, its own plan and head."""
    mode = c["mode"]
    decode = mode == "decode"
    hw = hardware_view(c)
    hw_plan = plan_of(hw)
    hw_seqs, hw_tokens = seqs, tokens
    if packed and not decode and hw["packed_kernel"] == "row":
        hw_seqs = Uniform(hw["max_target_length"], program_batch(hw))  # the program runs whole rows, padding too
        hw_tokens = hw_seqs.tokens
    elif not packed and hw["batch_shards"]:  # a batch padded to whole sequences per batch shard (program_batch)
        rows = program_batch(hw)
        if rows != seqs.count:
            hw_seqs = Uniform(seqs.length, rows)
            hw_tokens = rows if decode else hw_seqs.tokens
    hw_head = _head(hw, hw_tokens * head_passes(hw, steps), hardware=True)
    hw_head.update(_vision(hw, mode, steps))
    if hw["prompt_tokens"]:  # the layers run the prompt tokens ahead of every sequence
        hw_seqs = Uniform(hw_seqs.length + hw["prompt_tokens"], hw_seqs.count)
    return hw_plan, [price_hardware(kind, hw, hw_seqs, decode, steps) for kind in hw_plan.kinds], hw_head


def _price_step(c, plan, seqs, decode: bool, steps: int) -> tuple:
    """(rows, head) of model FLOPs, unrounded: what ``count`` prices for full rows (the traced pricing)."""
    rows = [model_raw(kind, c, seqs, decode, steps) for kind in plan.kinds]
    head = head_raw(c, (seqs.count if decode else priced_tokens(seqs, c)[0]) * head_passes(c, steps))
    if c["vision_layers"]:
        head.update(vision_raw(c, c["mode"], steps))
    return rows, head


def model_raw(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    """Model FLOPs of one row of this kind for the whole step, unrounded (a convention's Fractions kept)."""
    raw = _model_raw(kind, c, seqs, decode, steps)
    if c["mode"] == "train" and not kind.no_grad and (c["recompute_forwards"] or c["recompute_attention_forwards"]):
        # (a published hardware formula's recomputation: its forwards again, on top of the model count)
        for k, v in price_forward(kind, c, seqs, decode).out.items():
            again = c["recompute_forwards"] + (c["recompute_attention_forwards"] if k in ATTENTION else 0)
            raw[k] = raw.get(k, 0) + v * again * steps
    if not c["attention_flops"]:  # (a 6N convention: the weights alone)
        return {k: v for k, v in raw.items() if k not in ATTENTION}
    return raw


def _model_raw(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    p = price_forward(kind, c, seqs, decode)
    fwd = p.out
    if c["mode"] == "train" and not kind.no_grad:  # (a pass without a gradient: its forward)
        if warmup(c) or not INDEXER_COMPONENTS.isdisjoint(fwd):
            # (model pricing's grad_extra: the DSA indexer's scores under a loss over the selected pairs only)
            # (an output no loss reads runs forward only, when the stage runs it at all)
            return {k: (v * (min(train_factor(k, c), 1) if k in p.forward_only else train_factor(k, c))
                        + p.grad_extra.get(k, 0)) * steps for k, v in fwd.items()}
        if p.forward_only:  # outputs no loss reads (LSH's buckets): their forward only
            return {k: v * (1 if k in p.forward_only else 3) * steps for k, v in fwd.items()}
        steps *= 3  # every other component: forward and two backward matmuls (train_factor)
    return {k: v * steps for k, v in fwd.items()} if steps != 1 else fwd


# Breakdowns of calls without documents, by call key (maxflops.resolve.call_key): a config counted again, unchanged,
# is a lookup (the per-step path of a trainer)
_COUNTS: dict = {}


def _head(c, tokens, hardware: bool = False) -> dict:
    """The rows outside the decoder layers: the output head, and the per-layer-embedding projection."""
    return _rounded(head_raw(c, tokens, hardware))


def head_raw(c, tokens, hardware: bool = False) -> dict:
    """The output head for ``tokens`` tokens, unrounded: the logits (and an mHC hyper-head's projection)."""
    width = c["head_input_dim"] or c["emb_dim"]
    head = {"logits": terms.logits(width, terms.head_vocab(c, hardware), c["head_dense"]) * tokens} \
        if c["logits_flops"] else {}
    if c["embedding_flops"] and not (c["logits_via_embedding"] and c["logits_flops"] and width == c["emb_dim"]):
        # (a 6N convention's embedding in N, once: a tied table is the head's weights already)
        head["embedding_table"] = 2 * terms.head_vocab(c, hardware) * c["emb_dim"] * tokens
    for f in HEADS:  # the features' parts of the head (an mHC hyper head, the output's attention residuals...)
        head.update(f.head(c, tokens, hardware))
    return head


def _vision(c, mode: str, steps: int) -> dict:
    """The vision encoder, per step, rounded (see ``vision_raw``)."""
    return {k: _to_int(v) for k, v in vision_raw(c, mode, steps).items()}


def vision_raw(c, mode: str, steps: int) -> dict:
    """The vision encoder, per step: every sequence row encodes ``vision_images`` images in train and prefill
    (decode reuses the encoded images). Train: a frozen encoder runs forward only; the projector trains (3x)."""
    if not c["vision_layers"] or mode == "decode":
        return {}
    h, layers = c["vision_hidden_dim"], c["vision_layers"]
    seq = c["vision_patches"] + c["vision_extra_tokens"]
    weight, attention = terms.vit_layer(seq, h, c["vision_mlp_dim"])
    stages = lambda key: sum(2 * t * i * o for t, i, o in (map(int, x.split(":")) for x in c[key]))
    encoder = 2 * c["vision_patches"] * c["vision_patch_dim"] * h + layers * weight + stages("vision_encoder_stages")
    projector = stages("vision_projector")
    encoder_passes = 3 if mode == "train" and not c["vision_frozen"] else 1
    projector_passes = 3 if mode == "train" else 1
    if warmup(c):  # the warm-up stage trains the indexer alone: the rest runs forward, or not at all
        encoder_passes = projector_passes = train_factor("vision_encoder", c)
    images = Fraction(c["per_device_batch_size"]).limit_denominator(1 << 20) * c["vision_images"] * steps
    return {"vision_encoder": encoder * encoder_passes * images,
            "vision_attention": layers * attention * encoder_passes * images,
            "vision_projector": projector * projector_passes * images}


def sweep(config, key: str, values, segment_lengths=None, **overrides) -> list[Breakdown]:
    """``count`` at each value of one config key (e.g. ``sweep(cfg, "max_target_length", lengths)``). In decode
    mode the length is ``decode_kv_length`` (the tokens already cached): sweeping ``max_target_length`` there is
    an error, since decode does not read it."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"sweep: values of {key!r}: expected a list of values, got {values!r}"
                         f" ({type(values).__name__}); for one value, pass [{values!r}] or count(config, {key}=...)")
    config = from_source(config)
    if key == "max_target_length" and resolve_call(config, overrides)[0]["mode"] == "decode":
        raise ValueError("config key 'max_target_length': a decode step does not read it (it counts one new token "
                         "after decode_kv_length cached ones): sweep 'decode_kv_length' instead")
    return [count(config, segment_lengths, **{**overrides, key: v}) for v in values]
