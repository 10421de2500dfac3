"""The proof side of each mixer family: its module ``maxflops.families.<name>.proof`` (imports jax), found from the
family's record. A proof module holds

    KERNELS                         its reference kernels (each issues exactly the matmuls its hardware count says)
    layer(c, kind, p, h, top_idx, aux) -> (out, top_idx, aux)
                                    its Flax layer's body, inside ``maxflops.xla.model.Layer`` (``p(name, shape)``
                                    makes a parameter once)
    reduce(c) -> dict               its keys of the reduced model that ``maxflops.xla.model`` builds
    bench_cases(ctx) -> [Case]      its kernels as ``python -m maxflops.bench`` times them
    MATVEC                          "" or why XLA's optimizer rewrites its dots (matrix-vector) as multiply+reduce:
                                    a model holding it is checked on the lowered module

``SLOTS`` names them; ``tests/families/test_families.py`` lists every family that lacks one.

A trunk feature's part of the Flax model is the module its record names (``Feature.proof``:
``maxflops.features.proofs.<name>``, imports jax). ``maxflops.xla.model`` calls the hooks of the features on in a
config (``f.on(c)``), in the registry's order; a module defines those it needs (``FEATURE_SLOTS``):

    reduce(c, out) -> dict          its keys of the reduced model (``out``: the trunk's reduction of depth and widths)
    per_layer(c, x, param) -> a     an input of every decoder layer [B, L, layers, ...] from the embedding x [B, L, D]
                                    (``param(name, shape)`` makes a Decoder parameter); each layer gets its slice
    enter(c, x, param) -> state     a residual scheme (AltUp, attention residuals, mHC: at most one is on, their
                                    checks refuse two): the state the layers carry, from the embedding x [B, L, D]
    layer(c, kind, p, state, run, messages) -> state
                                    a residual scheme's layer: its branches and hooks are ``run`` (model.Run);
                                    without a scheme the trunk's plain residual runs (x + branch(norm(x)))
    rows(plan, c, carry, make) -> carry | None
                                    a residual scheme that runs the decoder rows itself (None: the trunk runs them)
    leave(c, state, param) -> x     a residual scheme: the state back to [B, L, D] before the output head
    branch_input(c, kind, p, x, tag) -> h | None
                                    a branch's input ("attn", "ffn") in place of the plain RMS norm (None: the norm)
    branch_output(c, p, y, tag, segments) -> y
                                    around a branch's output before it joins the residual
    beside_mixer(c, p, h, normed) -> h
                                    h plus a branch beside the mixer, on the mixer's normed input
    after_layer(c, p, y, rows) -> a what the layer adds to its output y (``rows``: the layer's slice of the
                                    feature's ``per_layer`` input)
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..families import FAMILIES, Family, family_of
from ..features import FEATURES

__all__ = ["SLOTS", "FEATURE_SLOTS", "proof_of", "proofs", "proof_of_kind", "feature_proofs"]

SLOTS = ("KERNELS", "layer", "reduce", "bench_cases", "MATVEC")
FEATURE_SLOTS = ("reduce", "per_layer", "enter", "layer", "rows", "leave", "branch_input", "branch_output",
                 "beside_mixer", "after_layer")


def proof_of(family: Family) -> ModuleType:
    """The proof module of a family."""
    return importlib.import_module(f"maxflops.families.{family.name}.proof")


def proof_of_kind(kind) -> ModuleType:
    """The proof module of the family that prices a plan's LayerKind."""
    return proof_of(family_of(kind))


def proofs() -> dict:
    """{family name: proof module}, in the registry's order."""
    return {fam.name: proof_of(fam) for fam in FAMILIES}


def feature_proofs(c) -> tuple:
    """((feature name, its proof module), ...) of the features on in config ``c`` that have one, in the registry's
    order."""
    return tuple((f.name, importlib.import_module(f.proof)) for f in FEATURES if f.proof and f.on(c))
