"""A model's parameters: total, and active per token, by component and by layer.

Counted from the same plan and per-token prices as the FLOPs: each weight matmul's forward over one token is 2 x the
weights it reads (``traffic.WEIGHT_MATMULS``), so its parameters are half its per-token FLOPs, and:

- routed experts: the total holds all ``num_experts`` (a product-key router's reachable ones), the active count the
  ``num_experts_per_tok`` a token is routed to (a mixture of attention heads' experts alike);
- a looped block's weights count once for all its passes (``layer_loops``; a pass after the first adds only the
  weights the first does not read, Inkling 2 Loop's message gates: ``traffic.weights_once``), a family's shared
  weights once per copy (Zamba's blocks: ``Family.shared``), and a family's weights that half its FLOPs do not give
  as it states them (``Family.weights``: Inkling's relative-position bank, the patch family's projections);
- the token embedding table (``vocab_size`` x ``emb_dim``, the vocabulary padded as the head's), a learned position
  table (``position_table_rows`` x ``emb_dim``), the features' tables (``Feature.tables``: Gemma's per-layer
  embeddings) and the output head, which is the token table when ``logits_via_embedding`` (tied embeddings) says so.

Active parameters are those one token's forward reads: every dense weight, its experts, the head, and its row of
each embedding table, which model cards count whole (so ``active`` holds the whole tables, as ``total`` does). MTP
modules (``mtp_num_layers``) count, on rows of their own after the decoder's.

Not counted: weights no matmul reads (norm scales, biases, per-channel gates and decays, a depthwise conv's kernels:
a few thousandths of a model) and tables the config does not size (Engram's n-gram tables). Held to transformers'
own models (tests/loaders/test_hf_params.py), the shipped configs' weight shapes (tests/core/test_parameters.py) and
published sizes (tests/core/test_models.py, tests/loaders/test_hf_published.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from . import terms
from .components import KNOWN, ordered
from .families import family_of
from .families.base import NO_MIXER
from .features import FEATURES
from .plan import layer_view
from .resolve import hardware_view, plan_of, resolve_call
from .traffic import layer_weights, weights_once

__all__ = ["Parameters", "parameters"]


@dataclasses.dataclass(frozen=True)
class Parameters:
    """A model's parameters (Python ints): ``components`` and ``active_components`` by component, ``layers`` the
    weights each plan row reads (decoder layers, then MTP modules; a Zamba block that several rows run is in each of
    them, once in the totals), ``tied`` whether the output head is the embedding."""

    model_name: str
    components: Mapping[str, int]
    active_components: Mapping[str, int]
    layers: tuple  # ((row name, total, active), ...)
    tied: bool

    @property
    def total(self) -> int:
        return sum(self.components.values())

    @property
    def active(self) -> int:
        return sum(self.active_components.values())

    @property
    def embeddings(self) -> int:
        """The embedding tables' part of the total (Kaplan et al.'s N leaves it out)."""
        return sum(v for k, v in self.components.items() if k in EMBEDDING_TABLES)

    def to_dict(self) -> dict:
        """Plain JSON types: the totals, each component and each row."""
        return {"model_name": self.model_name, "total": self.total, "active": self.active,
                "embeddings": self.embeddings, "tied": self.tied, "components": dict(self.components),
                "active_components": dict(self.active_components),
                "layers": [{"name": n, "total": t, "active": a} for n, t, a in self.layers]}


EMBEDDING_TABLES = ("embeddings", "position_embeddings", "per_layer_embeddings")


def parameters(config, **overrides: Any) -> Parameters:
    """The parameters of ``config`` (any input ``count`` takes; ``overrides`` as there). The mode is training's, so
    the MTP modules are counted; nothing else depends on the step."""
    c, _ = resolve_call(config, {**overrides, "mode": "train", "convention": "exact"})
    hw = hardware_view(c)
    plan = plan_of(hw)
    kinds_total = [layer_weights(kind, hw, lambda E, k: E) for kind in plan.kinds]
    kinds_active = [layer_weights(kind, hw, lambda E, k: k) for kind in plan.kinds]
    total: dict[str, int] = {}
    active: dict[str, int] = {}
    rows = []
    # a looped block's passes read one set of weights: each layer once (traffic.weights_once)
    firsts = [(name, i) for (name, i), p in zip(plan.rows, plan.passes or [1] * len(plan.rows)) if p == 1]
    once = [plan.kinds[i] for _, i in firsts]
    for (name, _), t, a in zip(firsts, weights_once(plan, hw, kinds_total), weights_once(plan, hw, kinds_active)):
        for into, per in ((total, t), (active, a)):
            for k, v in per.items():
                into[k] = into.get(k, 0) + v
        rows.append((name, sum(t.values()), sum(a.values())))
    _shared_once(hw, once, total, active)
    d = hw["emb_dim"]
    vocab = terms.padded_vocab(hw["vocab_size"], hw["make_vocab_size_divisible_by"], hw["tensor_parallel_size"])
    head_in = hw["head_input_dim"] or d
    tied = bool(hw["logits_via_embedding"]) and head_in == d
    outside = {"embeddings": vocab * d, "position_embeddings": hw["position_table_rows"] * d,
               "logits": terms.logits(head_in, vocab, hw["head_dense"]) // 2 - (vocab * d if tied else 0)}
    for f in FEATURES:  # the features' weights beside the head (an mHC hyper head, AltUp's projections...)
        if f.decode_head is not None:
            outside.update(f.decode_head(hw))
        if f.tables is not None:  # its lookup tables (Gemma's per-layer embeddings)
            outside.update(f.tables(hw))
    for into in (total, active):
        for k, v in outside.items():
            if v:
                into[k] = into.get(k, 0) + v
    return Parameters(hw["model_name"], _ordered(total), _ordered(active), tuple(rows), tied)


def _shared_once(c, kinds, total: dict, active: dict) -> None:
    """Weights a family's rows share (Zamba's blocks, run in turn by its hybrid layers) count once per copy: each row
    priced them."""
    rows: dict = {}
    for kind in kinds:
        if kind.mixer != NO_MIXER and family_of(kind).shared is not None:
            rows.setdefault(family_of(kind).name, []).append(kind)
    for of in rows.values():
        per_row, copies = family_of(of[0]).shared(of[0], layer_view(c, of[0]))
        extra = len(of) - min(copies, len(of))
        for into in (total, active):
            for k, v in per_row.items():
                into[k] -= v * extra


def _ordered(parts: Mapping[str, int]) -> dict:
    """The embedding tables first, then the components in the report's order (``maxflops.components``), then the
    features' head parts that are no FLOPs component (by name); each non-zero."""
    declared = ordered({k: v for k, v in parts.items() if k in KNOWN and v})
    return {**{k: parts[k] for k in EMBEDDING_TABLES if parts.get(k)}, **declared,
            **{k: parts[k] for k in sorted(parts) if k not in KNOWN and k not in EMBEDDING_TABLES and parts[k]}}
