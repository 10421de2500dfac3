"""HBM bytes of a decode step: the memory side of the step that is bound by memory, not FLOPs.

One decode step adds a token to every sequence. Its compulsory HBM traffic, per device, with each tensor read or
written once (``decode_traffic``):

- ``weights``: every weight the step multiplies by, read once for the whole batch (``weight_bytes`` each): the
  projections, the FFN, the output head; for routed experts, the experts the batch reaches, taken as
  min(num_experts, new tokens x num_experts_per_tok) (an upper bound: the tokens pick distinct experts), or all
  of them where ``moe_impl`` runs every expert; a mixture of attention heads' q and output experts likewise; plus
  the embedding rows of the new tokens;
- ``kv_read``: the cache entries each new token attends, its own included (kernels write it first): keys and values
  of GQA heads, MLA's latent (kv_lora + rope), DSA's top-k latent entries, DeepSeek-V4's window entries and
  compressed blocks (``kv_cache_bytes`` each);
- ``kv_write``: the new token's entry (no K/V for KV-shared layers), and a compressed block when one completes;
- ``index_read`` / ``index_write``: the DSA and CSA indexer's keys (``index_cache_bytes``): every cached key of a
  layer that computes its own top-k is scored;
- ``state``: the gated delta net's recurrent state and conv window, read and written (``state_bytes``).

Activations that stay in on-chip memory are not HBM traffic and are left out. The widths follow the hardware view
(exact knobs); the cache entries are the ones each token attends, whatever kernel reads them (a dense or tiled
kernel that reads more moves more). Per-layer embedding and Engram table rows are not counted. The figures are for one device holding the whole model, like the FLOPs: divide
the weights by your model-parallel degree.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

from . import masks, terms
from .pricing import price_forward
from .conventions import CONVENTIONS
from .families import FAMILIES, family_of, ffn_width
from .features import FEATURES, weight_components
from .families.base import NO_MIXER
from .features.layer_loops import layer_order
from .plan import LayerKind, layer_view
from .resolve import hardware_view, plan_of, resolve_call
from .sequences import Packed, Uniform, as_lengths, batch
from .weights import bytes_of, parse_rules

# Components of price_forward whose per-token FLOPs are 2 x the weights they multiply by (the features' and the
# families' say so in their records).
WEIGHT_MATMULS = frozenset({"qkv_proj", "out_proj", "mlp", "moe_router", "moe_shared", "moe_latent_proj", "indexer_proj",
                            "indexer_proj_attn", "compressor", "layer_up_proj"}) | weight_components() | frozenset(
    name for f in FAMILIES for name in f.weight_components)
DECODES = tuple(f for f in FEATURES if f.decode is not None)
DECODE_HEADS = tuple(f for f in FEATURES if f.decode_head is not None)


@dataclasses.dataclass(frozen=True)
class Traffic:
    """Compulsory HBM bytes of one decode step, per device, by component (Python ints)."""

    model_name: str
    sequences: int
    components: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.components.values())

    def to_dict(self) -> dict:
        """The step's bytes as plain JSON types: the total and each component (weights, KV cache read and written,
        index keys, recurrent state, embeddings)."""
        return {"model_name": self.model_name, "sequences": self.sequences, "total": self.total,
                "components": dict(self.components)}


def decode_traffic(config, segment_lengths: Sequence[int] | Any = None, **overrides) -> Traffic:
    """HBM bytes of one decode step of ``config`` (see the module doc). ``segment_lengths`` gives each sequence's
    KV-cache length, as in ``count``; without it, ``per_device_batch_size`` sequences of ``decode_kv_length``."""
    if overrides.get("mode", "decode") != "decode":
        raise ValueError(f"config key 'mode': decode_traffic counts a decode step, got {overrides['mode']!r}")
    if "convention" in overrides and overrides["convention"] not in CONVENTIONS:
        raise ValueError(f"config key 'convention': {overrides['convention']!r} is not one of "
                         f"{', '.join(map(repr, CONVENTIONS))}")
    # hardware: no peer's reporting convention (whichever one the config or the overrides name)
    c, _ = resolve_call(config, {**overrides, "mode": "decode", "convention": "exact"})
    hw = hardware_view(c)
    plan = plan_of(hw)
    seqs = Packed(as_lengths(segment_lengths, hw)) if segment_lengths is not None else \
        Uniform(hw["decode_kv_length"] + hw["prompt_tokens"], batch(hw))  # (the cache holds the prompt tokens)
    out = dict.fromkeys(("weights", "kv_read", "kv_write", "index_read", "index_write", "state"), 0)
    rules = parse_rules(hw["weight_bytes_rules"])
    wb = hw["weight_bytes"]

    def price(elements: dict, layer) -> Fraction:
        return sum(n * bytes_of(rules, wb, k, layer) for k, n in elements.items()) if rules else \
            sum(elements.values()) * wb

    per_kind = [_layer(kind, hw, seqs) for kind in plan.kinds]
    # a looped layer's weights are read once for all its passes (its caches are each pass's own)
    if rules or plan.passes:  # layer by layer: a rule may name layers
        for layer, elements in enumerate(weights_once(plan, hw, [e for e, _ in per_kind])):
            out["weights"] += price(elements, layer if rules else None)
    else:
        for (elements, _), rows in zip(per_kind, plan.multiplicity):
            out["weights"] += price(elements, None) * rows
    for (_, cache), rows in zip(per_kind, plan.multiplicity):
        for name, value in cache.items():
            out[name] += value * rows
    d = hw["emb_dim"]
    vocab = terms.padded_vocab(hw["vocab_size"], hw["make_vocab_size_divisible_by"], hw["tensor_parallel_size"])
    outside = {"logits": terms.logits(hw["head_input_dim"] or d, vocab, hw["head_dense"]) // 2}
    for f in DECODE_HEADS:  # the features' weights beside the head (an mHC hyper head, AltUp's projections...)
        outside.update(f.decode_head(hw))
    out["weights"] += price(outside, None)
    out["embeddings"] = price({"embeddings": seqs.count * d}, None)  # the new tokens' rows of the embedding table
    return Traffic(hw["model_name"], int(seqs.count), {k: _bytes(v) for k, v in out.items()})


def _bytes(value) -> int:
    """Whole bytes: a fractional size per element (block or group scales) rounds up once per component."""
    return int(value) if isinstance(value, int) else math.ceil(value)


def layer_weights(kind: LayerKind, c: Mapping[str, Any], reached, seqs=None, cache: dict | None = None) -> dict:
    """Weight elements of one layer of this kind by component: half its per-token weight-matmul FLOPs, the routed
    experts ``reached(E, k)`` of the E a router can name (k per token), and the features' weights (their caches go
    into ``cache``, for the step's sequences ``seqs``: ``maxflops.traffic``'s decode step; ``maxflops.parameters``
    reads the weights alone)."""
    one = Uniform(1, 1)  # weights: per-token FLOPs of one new token
    fwd = price_forward(kind, c, one, decode=True, hardware=True).out
    c = layer_view(c, kind)  # a layer of its own widths (layer_widths)
    elements = {k: v // 2 for k, v in fwd.items() if k in WEIGHT_MATMULS}
    if "moe_routed" in fwd:
        E, k = c["num_experts"], c["num_experts_per_tok"]
        if c["moe_router_product_keys"]:  # (the experts the half keys' pairs can name)
            E = terms.product_keys(E)[1]
        gated = len(c["mlp_activations"]) == 2 and not c["moe_experts_ungated"]
        elements["moe_routed"] = terms.mlp(c["moe_latent_size"] or ffn_width(c), c["moe_mlp_dim"], gated) // 2 * \
            reached(E, k)
    if c["attention_router_experts"] and kind.mixer != NO_MIXER and kind.projection == "gqa":
        # a mixture of attention heads: the q and output projections of the experts reached (top-k per token)
        E, k = c["attention_router_experts"], c["num_query_heads"] // c["num_kv_heads"]
        per_expert = c["emb_dim"] * c["num_kv_heads"] * c["head_dim"]
        more = reached(E, k) - k
        elements["qkv_proj"] += more * per_expert
        elements["out_proj"] += more * per_expert
    own: dict = {}  # the families' weights that half their FLOPs do not give (Family.weights): they replace them
    for mixer in (kind, kind.parallel):
        if mixer is not None and mixer.mixer != NO_MIXER and family_of(mixer).weights is not None:
            for k, v in family_of(mixer).weights(mixer, c).items():
                own[k] = own.get(k, 0) + v
    elements.update(own)
    cache = {} if cache is None else cache
    for f in DECODES:  # the features' weights and caches (attention residuals' score vectors, residual convs...)
        f.decode(kind, c, one if seqs is None else seqs, elements, cache)
    return elements


def weights_once(plan, c: Mapping[str, Any], per_kind: list) -> list:
    """Each layer's weight elements once (``per_kind[i]`` for ``plan.kinds[i]``), in layer order, the MTP modules
    after the decoder's layers. A looped layer's weights serve all its passes, so its elements are, component by
    component, the most any of its passes reads (a pass after the first may read weights the first does not: Inkling
    2 Loop's message gates)."""
    if not plan.passes:
        return [per_kind[i] for _, i in plan.rows]
    order = layer_order(c)
    rows = [dict(per_kind[i]) for (_, i), p in zip(plan.rows, plan.passes) if p == 1]  # (list index = layer)
    for r, ((_, i), p) in enumerate(zip(plan.rows, plan.passes)):
        if p != 1:
            mine = rows[order[r][0]]
            for k, v in per_kind[i].items():
                mine[k] = max(mine.get(k, 0), v)
    return rows


def _layer(kind: LayerKind, c: Mapping[str, Any], seqs) -> tuple:
    """One layer of this kind, for the whole batch: (weight elements read by component, cache bytes by name)."""
    dense = c["moe_impl"] in ("dense", "ragged_dense", "capacity")  # (every expert runs)
    cache = {}
    elements = layer_weights(kind, c, lambda E, k: E if dense else masks._minimum(seqs.count * k, E), seqs,
                             cache)
    c = layer_view(c, kind)
    for mixer in (kind, kind.parallel):
        if mixer is not None and mixer.mixer != NO_MIXER:
            for name, value in family_of(mixer).decode_cache(mixer, c, seqs).items():  # its cache (or state)
                cache[name] = cache.get(name, 0) + value
    # (a family's own "weights", a conv's kernel, come priced at weight_bytes: no Linear, never quantized)
    return elements, cache


__all__ = ["Traffic", "decode_traffic", "layer_weights"]
