"""What every mixer family shares: the priced forward of one layer kind, and the family record the registry holds.

A family's pricing reads the step only through ``seqs``' methods (``sum``, ``sum_scalar``, ``tokens``, ``count``,
``longer_than``, ``whole``) and stays linear in what they return: ``maxflops.stepform`` traces it once with symbols
and evaluates the form at each new length and batch (docs/contributing.md, "the step-form contract")."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

__all__ = ["Priced", "Family", "ffn_width", "read_branch_ends", "NO_FFN", "NO_MIXER"]

NO_FFN = "none"  # LayerKind.ffn of a layer without an FFN ('-' in ffn_layer_pattern)
NO_MIXER = ""  # LayerKind.mixer of a layer without a mixer ('-' in attention_layer_pattern): no family prices it


class Priced:
    """One layer kind's forward, as the pricing functions below fill it (see ``maxflops.pricing.price_forward``).

    ``out``: FLOPs by component; ``qk``: the QK^T part of core_attention; ``tail``: parts not recomputed by remat;
    ``single``: parts with one backward matmul; ``unnamed``: parts no remat policy saves; ``grad_extra``: backward
    FLOPs beyond two per forward; ``closing``: the mixer's last matmul, whose output only joins the layer's output
    when no FFN follows (a mixer-only layer), so that a rematerialized layer does not recompute it (see
    price_forward's tail); ``forward_only``: the components whose output no loss reads, run forward with no backward
    in training (an eager program's dead work); ``warmup_unnamed``: of ``unnamed``, what the DSA warm-up's backward
    recomputes under a policy that saves q/k/v (only what the indexer's loss reads; ``unnamed`` where absent). Every part but ``qk`` is
    by component. (A plain slotted class: one is made per layer kind and count.)"""

    __slots__ = ("out", "qk", "tail", "single", "unnamed", "grad_extra", "closing", "warmup_unnamed", "forward_only")

    def __init__(self):
        self.out, self.qk, self.tail, self.single, self.unnamed, self.grad_extra, self.closing = {}, 0, {}, {}, {}, {}, {}
        self.warmup_unnamed, self.forward_only = {}, set()


def read_branch_ends(p: Priced, up_proj: bool = True) -> None:
    """The layer's branch outputs are read again after they join the residual (mHC's post weights, AltUp's
    correction, the per-layer gate): a rematerialized layer recomputes their last matmuls, no tail of theirs stays
    (a latent FFN's up-projection too, with ``up_proj``)."""
    for k in ("mlp", "moe_routed", "moe_shared", "moe_combine", "moe_weighted_sum",
              *(("layer_up_proj",) if up_proj else ()), *p.closing):
        p.tail.pop(k, None)


def ffn_width(c) -> int:
    """The attention output's and the FFN's width (emb_dim unless attention_output_dim says otherwise)."""
    return c["attention_output_dim"] or c["emb_dim"]


@dataclasses.dataclass(frozen=True)
class Family:
    """One mixer family: everything about it in one record, registered in ``maxflops.families.FAMILIES``.

    The engine (plan, pricing, decode bytes), the breakdown and report (components, labels), the config check (its
    letters and keys), the loaders (letters) and the proof side (``maxflops.xla.registry``) read this record; nothing outside the
    family's module branches on its name.
    """

    name: str  # the one name of the family (also its mixer kinds' prefix in docs)
    letters: Mapping[str, str]  # attention_layer_pattern letter -> what it means
    mixers: Mapping[str, str]  # LayerKind.mixer values it prices -> report label
    components: tuple  # the Components it adds (maxflops.components)
    schema: Mapping  # its config keys: key -> maxflops.fields.Field (its section of the schema)
    mixer_of: Callable  # (letter, layer_number, c) -> (mixer, span, computes_index, ratio), or None if not its own
    price: Callable  # model FLOPs of one kind: (p: Priced, kind, c, seqs, decode, tokens) -> None
    price_hardware: Callable  # hardware FLOPs (c: the exact hardware view), same signature
    decode_cache: Callable  # (kind, c, seqs) -> {kv_read, kv_write, index_read, index_write, state: bytes}
    projection: str = ""  # the LayerKind.projection its layers have whatever attention_type says, and by which it
    #                       claims them ("" : its layers project as attention_type says)
    label: Callable | None = None  # (mixer label, row) -> the report's description of a row's mixer
    check: Callable | None = None  # (c, letters in use, err) -> None: its keys' checks; err(key, msg) raises
    conventions: tuple = ()  # the conventions that have a rule for its layers (empty: every convention); the
    #                       others are refused by its check (maxflops.conventions.convention_defined says which)
    hf_layer_types: Mapping[str, str] = dataclasses.field(default_factory=dict)  # a Hugging Face config's
    #                       layer_types entry -> its letter (the HF loader's table is built from these)
    idle: Callable | None = None  # (c) -> why its layers are skipped whole, mixer and FFN, under this config ("":
    #                       they run; the cross-attention layers of a text-only step); read by the plan
    weight_components: tuple = ()  # of its components, the matmuls whose per-token FLOPs are 2 x the weights they
    #                       read (decode traffic's weights, maxflops.parameters)
    weights: Callable | None = None  # (kind, c) -> {component: elements}: a layer's weights where half its per-token
    #                       FLOPs do not give them (a bank all heads share, projections over a stream of its own);
    #                       they replace that reading for the components named (decode traffic, maxflops.parameters)
    shared: Callable | None = None  # (kind, c) -> ({component: elements of one row}, copies): weights its rows
    #                       share, copies sets of them in all (Zamba's shared blocks; maxflops.parameters)
    shared_keys: tuple = ()  # its keys that other families or the trunk read too (the inert rule of its letters
    #                       leaves them out: maxflops.checks)
    claims: int = 50  # where it asks for a pattern letter among the families that could take it (mixer_of): lower
    #                   first; a family whose mixer_of takes letters another's also does says so here (a compressed
    #                   model's window layers are its family's: 10; DSA's 'G' layers: 20; plain attention last: 90)
    plan_keys: tuple = ()  # the config keys its mixer_of and idle read: the plan is cached on the trunk's keys and every
    #                       family's (maxflops.resolve.PLAN_KEYS); tests/house/test_plan_keys.py holds each to its own
    # The proof side lives in the family's package too, in ``proof.py`` (imports jax): its reference kernels, its
    # Flax layer, its part of the reduced model and its bench cases (maxflops.xla.registry names the slots; a test
    # lists every family that lacks one).

    @property
    def keys(self) -> tuple:
        return tuple(self.schema)
