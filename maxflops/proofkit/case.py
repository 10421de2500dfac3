"""What a bench case is, and what each family's case builder is given (no jax here: the builders import it).

A family's proof module (``maxflops.families.<name>.proof``) builds its cases with ``bench_cases(ctx)``; the
trunk's cases (MoE, a full train step) are built in ``maxflops.bench.cases``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass
class Case:
    name: str
    shapes: str
    run: Callable  # (mesh) -> (jitted fn, args, shard divisor)
    analytic: Callable  # () -> (model FLOPs, hardware FLOPs), global
    module: str = "optimized"  # which XLA module the equality is checked on
    why: str = ""
    only: tuple = ()  # backends this kernel needs ('tpu',): skipped elsewhere
    # (the engine's HBM bytes for what this kernel streams, the bytes of the arrays it streams), from the run's
    # arguments: the engine's bytes view checked against the kernel's own arrays
    engine_bytes: Callable | None = None


class Skip(Exception):
    """This environment cannot run this kernel: the row is skipped with the reason."""


@dataclasses.dataclass
class Ctx:
    """What a case builder is given: the preset's sizes, the backend, the dtype, ``arr(*shape, dt=None)`` (a random
    array, seeded), and ``sharded(mesh, args)`` -> (args placed on the mesh, the number of devices the work splits
    over) for arrays in the [B, L, heads, d] layout."""

    p: dict
    backend: str
    dtype: Any
    arr: Callable
    sharded: Callable


ENGINE_BASE = dict(num_decoder_layers=1, emb_dim=16, vocab_size=32, mlp_dim=24)


def engine(mode="prefill", **kw):
    """The engine's count of a one-layer model with the case's keys."""
    import maxflops

    return maxflops.count(maxflops.model_config(**{**ENGINE_BASE, "mode": mode, **kw}))


def component(b, name):
    """(model, hardware) FLOPs of one component of a breakdown."""
    return b.components.get(name, 0), b.hardware_components.get(name, 0)


def components(b, *names):
    """(model, hardware) FLOPs of several components together."""
    parts = [component(b, n) for n in names]
    return sum(m for m, _ in parts), sum(h for _, h in parts)


def tokamax():
    """tokamax, or Skip with what it needs."""
    try:
        import tokamax as tk
    except ImportError as e:
        raise Skip("needs tokamax (pip install tokamax; Python >= 3.12)") from e
    return tk
