"""One layer kind's forward FLOPs, by component (``price_forward``): its mixer by its family, the FFN (dense,
routed experts, shared experts), and the extras around them (a latent FFN's up-projection, each trunk feature's
part). ``maxflops.account`` multiplies these into a step's model and hardware FLOPs; ``maxflops.traffic`` and
``maxflops.parameters`` read the weights off them. Below account in the house's layering, so that the parameter
count and decode traffic can be reached from a Breakdown without an import circle.
"""

from __future__ import annotations

from fractions import Fraction

from . import terms
from .families import Priced, family_of, ffn_width
from .features import PRICED
from .families.base import NO_FFN, NO_MIXER
from .plan import LayerKind, layer_view
from .sequences import patch_stream, priced_tokens, program_batch


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
