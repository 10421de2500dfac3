"""Proof against XLA: loop-aware matmul counters, reference kernels and a Flax model built from any config.

    from maxflops.xla import count_matmuls, count_lowered
    count_matmuls(jax.jit(f), *args).matmul_flops     # the optimized module, per device under SPMD
    count_lowered(f, *args).matmul_flops              # the pre-optimization module, every matmul as issued

Both multiply each while-loop body (``lax.scan``, ``nn.scan``) by its trip count and report XLA's own
``cost_analysis()`` figure beside it (``raw_cost_analysis_flops``), which counts a loop body once.
This package imports jax; ``import maxflops`` does not.
"""

from .hlo import Dot, MatmulCount, count_hlo_text, count_lowered, count_matmuls
from .jaxpr_count import count_jaxpr
from .program import ProgramCount, count_program, reconcile

__all__ = ["Dot", "MatmulCount", "ProgramCount", "count_hlo_text", "count_lowered", "count_matmuls", "count_jaxpr",
           "count_program", "reconcile"]
