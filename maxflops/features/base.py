"""The trunk feature record and its registry (the package ``maxflops.features`` lists them)."""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

__all__ = ["Feature", "register", "feature", "registered", "one_residual_scheme", "branches"]


@dataclasses.dataclass(frozen=True)
class Feature:
    """One trunk feature: everything about it in one record.

    ``price`` runs after the layer's mixer and FFN are priced (``maxflops.pricing.price_forward``), in ``order``
    among the features (their effects on what a rematerialized layer recomputes compose in that order): it adds the
    feature's components to the layer's ``Priced`` and adjusts its tail. ``decode`` adds the feature's weight
    elements and cache bytes of one layer to a decode step's (``maxflops.traffic``). ``proof`` names its part of the
    Flax model (``maxflops.xla.registry`` lists the hooks such a module may define)."""

    name: str
    what: str                       # one line: what it is (the docs' list of features)
    schema: Mapping                 # its config keys: key -> maxflops.fields.Field (its section of the schema)
    switches: tuple                 # the keys that turn it on: read by every model (never inert by its rule)
    on: Callable                    # (c) -> whether the model runs it: its other keys are read only then
    off: str                        # why its other keys change nothing where it is off (the inert-key warning)
    order: int = 0                  # where its price runs among the features' (lower first)
    components: tuple = ()          # the Components it adds (maxflops.components)
    weight_components: tuple = ()   # of those, the matmuls whose per-token FLOPs are 2 x the weights they read
    check: Callable | None = None   # (c, err) -> None: its keys' relations; err(key, msg) raises
    price: Callable | None = None   # (p, kind, c, seqs, decode, tokens, hardware) -> None: its part of a layer
    decode: Callable | None = None  # (kind, c, seqs, elements, cache) -> None: its weights and cache in a decode step
    head: Callable | None = None    # (c, tokens, hardware) -> {component: FLOPs}: its part of the output head's row
    decode_head: Callable | None = None  # (c) -> {name: weight elements}: the weights of its head part a decode step
    #                                 reads
    tables: Callable | None = None  # (c) -> {name: elements}: its lookup tables (no FLOPs; maxflops.parameters)
    flags: Mapping = dataclasses.field(default_factory=dict)  # the marks it puts on a layer's kind (maxflops.plan's
    #                                 LayerKind reads them as attributes): name -> value on an unmarked layer
    mark: Callable | None = None    # (c) -> ((layer, pass) -> {flag: value}): its marks on each decoder layer, where
    #                                 it is on (the plan keeps those not at their default in LayerKind.features)
    shared_keys: tuple = ()         # its keys that others read too (its inert rule leaves them out)
    reads: Mapping = dataclasses.field(default_factory=dict)  # key -> (predicate, why): a key of its read under a
    #                                 narrower rule than ``on`` (this rule wins for that key)
    proof: str = ""                 # its module of the Flax model's part (maxflops.features.proofs.<name>, found by
    #                                 maxflops.xla.registry), or "": the Flax model has none of its own

    @property
    def keys(self) -> tuple:
        return tuple(self.schema)


_REGISTRY: dict[str, Feature] = {}


def register(f: Feature) -> Feature:
    """Add a feature to the registry (at import of its module); a second one of its name is refused, as is a key or a
    layer flag of another feature's."""
    if f.name in _REGISTRY:
        raise ValueError(f"feature {f.name!r} registered twice")
    for other in _REGISTRY.values():
        both = set(other.schema) & set(f.schema)
        if both:
            raise ValueError(f"config key {sorted(both)[0]!r} declared by features {other.name!r} and {f.name!r}")
        both = set(other.flags) & set(f.flags)
        if both:
            raise ValueError(f"layer flag {sorted(both)[0]!r} declared by features {other.name!r} and {f.name!r}")
    _REGISTRY[f.name] = f
    return f


def feature(name: str) -> Feature:
    return _REGISTRY[name]


def registered() -> tuple:
    """The features registered so far, in their order (``Feature.order``, then name)."""
    return tuple(sorted(_REGISTRY.values(), key=lambda f: (f.order, f.name)))


def one_residual_scheme(c, key: str, err, attn_res: bool = True) -> None:
    """A residual scheme's key beside mHC's streams (or attention residuals, with ``attn_res``): two schemes at once
    are not modelled."""
    if c[key] and c["mhc_expansion_rate"] > 1:
        err(key, f"{c[key]} with mhc_expansion_rate={c['mhc_expansion_rate']}: not modelled (two residual schemes at "
                 "once)")
    if attn_res and c[key] and c["attn_res_block_size"]:
        err(key, f"{c[key]} with attn_res_block_size={c['attn_res_block_size']}: not modelled (two residual schemes "
                 "at once)")


def branches(kind) -> int:
    """The branches a layer of this kind has: its mixer, its FFN (0, 1 or 2)."""
    from ..families.base import NO_FFN, NO_MIXER

    return (kind.mixer != NO_MIXER) + (kind.ffn != NO_FFN)
