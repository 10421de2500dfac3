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
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..families import FAMILIES, Family, family_of

__all__ = ["SLOTS", "proof_of", "proofs", "proof_of_kind"]

SLOTS = ("KERNELS", "layer", "reduce", "bench_cases", "MATVEC")


def proof_of(family: Family) -> ModuleType:
    """The proof module of a family."""
    return importlib.import_module(f"maxflops.families.{family.name}.proof")


def proof_of_kind(kind) -> ModuleType:
    """The proof module of the family that prices a plan's LayerKind."""
    return proof_of(family_of(kind))


def proofs() -> dict:
    """{family name: proof module}, in the registry's order."""
    return {fam.name: proof_of(fam) for fam in FAMILIES}
