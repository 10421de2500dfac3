"""The trunk's features, one module each, registered here: what a model adds around its layers (per-layer
embeddings, Engram, mHC, LAuReL, AltUp, residual convs, gated norms, attention residuals, looped depth's messages, a
patcher's head, MTP modules) or inside them (KV sharing, zero experts, prompt tokens). A feature's module holds its
record (:class:`Feature`): its config keys (its section of the schema), its components, its checks, the keys it
reads only when on (the inert-key warning), its part of a layer's price and of a decode step's bytes. The engine
(``maxflops.account``), ``decode_traffic``, the config check and the schema read the registry; nothing outside a
feature's module branches on its keys for those parts. Its part of the Flax model that proves the count is its proof
module, ``maxflops.features.proofs.<name>`` (jax; named in the record, ``Feature.proof``).

    FEATURES          the registered features, in the order their prices run around a layer (``order``)
    feature(name)     one of them
    base.register(f)  how a feature's module adds its record at import (a second feature of a name, or a key
                      another feature declares, is refused; a component declared twice differently, too)

Adding a feature: see "Adding a trunk feature" in docs/contributing.md.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .. import components
# each module registers its record when imported (maxflops.features.base.register): this list is the registry's door
from . import (altup, attn_res, engram, gated_norms, kv_sharing, laurel, layer_loops, mhc, mtp,  # noqa: F401
               patch_stream, per_layer_embeddings, prompt_tokens, residual_conv, zero_experts)
from .base import Feature, feature, registered

__all__ = ["Feature", "FEATURES", "PRICED", "MARKING", "FLAGS", "feature", "weight_components", "inert_rules",
           "marks"]

FEATURES: tuple[Feature, ...] = registered()
PRICED: tuple[Feature, ...] = tuple(f for f in FEATURES if f.price is not None)
MARKING: tuple[Feature, ...] = tuple(f for f in FEATURES if f.mark is not None)
FLAGS: dict[str, Any] = {name: default for f in FEATURES for name, default in f.flags.items()}

for _f in FEATURES:
    components.register(*_f.components)


def weight_components() -> frozenset:
    """The features' components whose per-token FLOPs are 2 x the weights they read (decode traffic's weights)."""
    return frozenset(name for f in FEATURES for name in f.weight_components)


def inert_rules() -> dict[str, tuple[Callable[[Mapping[str, Any]], bool], str]]:
    """key -> (read by this config?, why not), for every feature's keys but its switches and shared keys."""
    out = {}
    for f in FEATURES:
        for key in f.schema:
            if key in f.reads:
                out[key] = f.reads[key]
            elif key not in f.switches and key not in f.shared_keys:
                out[key] = (f.on, f.off)
    return out




def marks(c) -> Callable[[int, int], tuple]:
    """(layer, pass) -> the features' marks on that decoder layer: ((flag, value), ...) sorted, those not at their
    default."""
    markers = [f.mark(c) for f in MARKING]
    markers = [m for m in markers if m is not None]

    def on(layer: int, p: int) -> tuple:
        got = {}
        for m in markers:
            got.update(m(layer, p))
        return tuple(sorted((k, v) for k, v in got.items() if v != FLAGS[k]))

    return on
