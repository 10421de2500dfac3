"""Training multipliers, defined once: what a train step costs per component as a multiple of its forward, and
what a rematerialized layer recomputes.

Forward + backward: a matmul whose two inputs both need gradients costs 3x its forward (forward, input gradient,
weight gradient). The DSA indexer reads detached inputs: its projections cost 2x (forward + weight gradient) and its
scoring 3x (both operands come from trained indexer weights); with ``indexer_loss_scaling_factor == 0`` nothing
reaches it and it costs 1x; its KL target is forward only. ``indexer_train_factor`` overrides. In the DSA dense
warm-up stage (``indexer_stage='warmup'``) the frozen model runs forward only and only the indexer trains.

Model FLOPs (``maxflops.account.count``) and hardware FLOPs (``price_hardware``) both read ``train_factor``: a new
component whose factor is not 3 changes here and nowhere else.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["INDEXER_COMPONENTS", "train_factor", "warmup", "hardware_train_flops", "head_passes", "REMAT_SAVES",
           "WARMUP_REMAT", "WARMUP_CSE", "recomputed"]

INDEXER_COMPONENTS = frozenset({"indexer_proj", "indexer_proj_attn", "indexer_score", "indexer_kl"})


def hardware_train_flops(component: str, forward, single, c):
    """Hardware forward + backward FLOPs of a component: ``train_factor`` times its forward, less one backward
    matmul of its ``single`` part (see ``price_forward``) when ``outer_product_grads='elementwise'`` and the
    factor is the gradient rule's 3."""
    factor = train_factor(component, c)
    if factor == 3 and single and c["outer_product_grads"] == "elementwise":
        return forward * 3 - single
    return forward * factor


def warmup(c) -> bool:
    """The DSA dense warm-up stage (``indexer_stage``) in training: only the indexer trains."""
    return c["indexer_stage"] == "warmup" and c["mode"] == "train" and c["indexer_stage_in_model"]


def train_factor(component: str, c) -> int:
    """Forward + backward cost of a component as a multiple of its forward. In the warm-up stage the frozen model
    runs forward only (1x) and the indexer keeps its rule; with no KL loss nothing trains (0x)."""
    if warmup(c):
        if c["indexer_loss_scaling_factor"] == 0:
            return 0
        if component not in INDEXER_COMPONENTS:
            return 1
    if component in INDEXER_COMPONENTS:
        if component == "indexer_kl":  # a detached target: forward only
            return 1
        if c["indexer_train_factor"]:
            return c["indexer_train_factor"]
        if c["indexer_loss_scaling_factor"] == 0:
            return 1
        return 2 if component in ("indexer_proj", "indexer_proj_attn") else 3
    return 3


# In the warm-up stage the only gradient is the indexer's: a rematerialized layer recomputes its indexer, the
# KL loss's target (the main scores) and what feeds them (the q/k projections; a compressed layer's compressor).
WARMUP_REMAT = INDEXER_COMPONENTS | {"qkv_proj", "compressor"}
# Of those, what XLA's CSE merges with the forward in a layer scanned alone (measured: the indexer's scores are
# recomputed all the same).
WARMUP_CSE = frozenset({"qkv_proj", "indexer_proj", "indexer_proj_attn", "indexer_kl"})


# What each remat policy saves (MaxText's checkpoint names, grouped): 'qkv' the q/k/v projections, 'out' the
# output projection, 'context' the attention output, 'mlpwi' the MLP up/gate projections, 'mlpwo' its down one.
REMAT_SAVES = {
    "full": frozenset(),
    "reversible": frozenset(),
    "minimal": frozenset({"qkv", "out", "mlpwi", "mlpwo"}),
    "minimal_offloaded": frozenset({"qkv", "out", "mlpwi", "mlpwo"}),
    "minimal_with_context": frozenset({"qkv", "out", "mlpwi", "mlpwo", "context"}),
    "save_dot_with_context_except_mlp": frozenset({"qkv", "context", "out"}),
    "save_dot_except_mlpwi": frozenset({"qkv", "out", "mlpwo"}),
    "save_dot_except_mlp": frozenset({"qkv", "out"}),
    "save_qkv_proj": frozenset({"qkv"}),
    "qkv_proj_offloaded": frozenset({"qkv"}),
    "save_out_proj": frozenset({"out"}),
}


def recomputed(component: str, forward, qk, tail, saved: frozenset, wi_share=Fraction(2, 3), unnamed=0):
    """The forward FLOPs of one component the backward pass recomputes under a remat policy saving ``saved``.
    The MLP and the experts (routed and shared, which carry the MLP's names): ``wi_share`` of their matmuls are the
    up (and gate) projections ('mlpwi'), the rest the down projection ('mlpwo'), of which ``tail`` is never
    recomputed. ``unnamed``: the part of the component no
    policy name covers (MLA's q and kv down projections: its saved names are the up-projected q, k and v)."""
    if component == "qkv_proj" and "qkv" in saved:
        return unnamed
    if component == "out_proj" and "out" in saved:
        return max(unnamed - tail, 0)  # (a mixer-only layer's output projection is a tail: never recomputed)
    if component == "core_attention" and "context" in saved:  # P V is saved; the scores are recomputed
        return qk + unnamed
    if component in ("mlp", "moe_routed", "moe_shared") and saved & {"mlpwi", "mlpwo"}:
        named = forward - unnamed
        wi = named * wi_share
        return unnamed + (0 if "mlpwi" in saved else wi) + (0 if "mlpwo" in saved else named - wi - tail)
    return forward - tail


def head_passes(c, steps: int) -> int:
    """How many times the output head runs per step: 3 in training (0 in the warm-up stage, which skips it), 1 else."""
    return (0 if warmup(c) else 3 if c["mode"] == "train" else 1) * steps
