"""Loop-aware matmul FLOP counter for XLA HLO modules.

XLA's ``cost_analysis()`` counts the body of a ``while`` loop once, whatever its trip count, so a scanned model
(``lax.scan``, ``nn.scan``, MaxText's ``scan_layers``) reports about one layer's FLOPs. This module parses the HLO
text of a module, builds its call graph (fusions, while bodies, calls, conditionals, async wrappers), and counts every
``dot`` and ``convolution`` once per execution: each computation gets a *multiplier*, the sum over its call sites of
the caller's multiplier times the trip count of the loop (1 for plain calls and fusions).

Only matmul FLOPs are counted (``dot`` and ``convolution``); elementwise ops, reductions and transcendentals are not,
because their counts move between the lowered and the optimized module (XLA's optimizer fuses, splits and
rewrites them), while every dot it keeps is the same dot.

Conventions, matching ``HloCostAnalysis``:

- ``dot``: ``2 * prod(result dims) * prod(lhs dims at lhs_contracting_dims)``.
- ``convolution``: ``2 * batch / batch_group_count * out_features * (in_features / feature_group_count)
  * prod over spatial dims of the number of (output position, kernel tap) pairs whose input index falls inside the
  unpadded (and un-dilated) input``: padding taps cost nothing.

Entry points:

- :func:`count_hlo_text`: any HLO text (``compiled.as_text()``, or ``lowered.as_text(dialect="hlo")``).
- :func:`count_matmuls`: the optimized (compiled) module of a function / ``Lowered`` / ``Compiled``: what runs. With
  SPMD partitioning the compiled module is per device, so the count is per device.
- :func:`count_lowered`: the pre-optimization module: global (not per device) and before CSE, so ``jax.checkpoint``
  recompute is visible.

Trip counts come from the ``"known_trip_count":{"n":"12"}`` entry of a ``while``'s ``backend_config`` (the optimized
module carries it when the bound is static); failing that, from the standard loop pattern (the condition compares an
induction variable LT a constant, the body adds a positive constant to it, and the init tuple starts it at a
constant), which is what ``lax.scan`` and ``fori_loop`` lower to. A loop whose body (transitively) holds a matmul and
whose trip count is neither annotated nor derivable raises ``ValueError``.

Conditionals: the branches must have the same (loop-aware) matmul FLOPs, counted once; otherwise ``ValueError``
(which branch runs is data-dependent). ``condition=`` computations and scalar ``to_apply`` reducers/comparators
(reduce, sort, scatter, all-reduce...) are not counted; ``call`` ``to_apply`` targets are. Library matmul
custom-calls (cuBLAS gemm: dimension numbers in the backend_config; cuDNN convolutions: window/dim_labels) are
counted; another custom-call whose target looks like a matmul raises rather than be dropped silently.

Scopes: ``Dot.op_name`` is the instruction's metadata op_name. In the pre-optimization module the op_names inside a
called computation (a scan body, a nested jit) are relative to it ("mlp/dot_general"); they are made absolute by
prefixing the call site's op_name, so :meth:`MatmulCount.by_scope` works on both modules. A computation reached
under several op_names yields one ``Dot`` per op_name.

This module imports jax lazily (only :func:`count_matmuls` and :func:`count_lowered` need it).
"""

from __future__ import annotations

from .hlo_count import Dot, MatmulCount, conv_valid_positions, count_module  # noqa: F401 (the package face)
from .hlo_parse import parse_hlo_module  # noqa: F401

__all__ = ["Dot", "MatmulCount", "count_hlo_text", "count_matmuls", "count_lowered", "parse_hlo_module",
           "conv_valid_positions"]


def count_hlo_text(text: str, raw_cost_analysis_flops: float | None = None) -> MatmulCount:
    """Count the matmul FLOPs of an HLO module given as text.

    ``naive_matmul_flops`` counts every while body once (trip counts taken as 1) but keeps call multiplicities, as
    ``cost_analysis`` does; it equals ``sum(d.flops)`` when every computation has a single call site (the case in
    optimized modules). ``raw_cost_analysis_flops`` is passed through (None: unavailable).
    """
    return count_module(parse_hlo_module(text), raw_cost_analysis_flops)


# ----------------------------------------------------------------------------------------------------------------------
# jax entry points
# ----------------------------------------------------------------------------------------------------------------------

def _cost_flops(stage) -> float | None:
    try:
        ca = stage.cost_analysis()
    except Exception:  # noqa: BLE001 - not all backends/versions implement it
        return None
    if ca is None:
        return None
    if isinstance(ca, (list, tuple)):                    # jax 0.4.x: one dict per module
        if not ca:
            return None
        ca = ca[0]
    return float(ca.get("flops", 0.0))


def _lower(fn_or_stage, args, kwargs):
    import jax

    if isinstance(fn_or_stage, (jax.stages.Lowered, jax.stages.Compiled)):
        if args or kwargs:
            raise TypeError("arguments given with an already lowered/compiled stage")
        return fn_or_stage
    if not callable(fn_or_stage):
        raise TypeError(f"expected a callable, jax.stages.Lowered or jax.stages.Compiled, got {type(fn_or_stage)}")
    fn = fn_or_stage if hasattr(fn_or_stage, "lower") else jax.jit(fn_or_stage)
    return fn.lower(*args, **kwargs)


def count_matmuls(fn_or_stage, *args, **kwargs) -> MatmulCount:
    """Loop-aware matmul FLOPs of the optimized module: what runs (per device under SPMD partitioning).

    ``fn_or_stage``: a ``jax.stages.Compiled``, a ``jax.stages.Lowered`` (compiled here), or a callable (jitted if it
    is not already, lowered with ``*args, **kwargs``, compiled). ``raw_cost_analysis_flops`` is the compiled
    module's ``cost_analysis()['flops']``, which counts loop bodies once.
    """
    import jax

    stage = _lower(fn_or_stage, args, kwargs)
    compiled = stage.compile() if isinstance(stage, jax.stages.Lowered) else stage
    return count_hlo_text(compiled.as_text(), _cost_flops(compiled))


def count_lowered(fn_or_lowered, *args, **kwargs) -> MatmulCount:
    """Loop-aware matmul FLOPs of the pre-optimization module: global (not per device), no CSE.

    Use it to see ``jax.checkpoint`` recompute, which XLA may CSE away in the optimized module. Trip counts are
    derived from the loop conditions (the pre-optimization module carries no ``known_trip_count``); a loop with
    matmuls and a non-standard condition raises ``ValueError``. ``raw_cost_analysis_flops`` is
    ``lowered.cost_analysis()['flops']``. A ``shard_map`` body is already per device in this module (XLA sees it
    with per-device shapes), so only the rest of the module is global.
    """
    import jax

    stage = _lower(fn_or_lowered, args, kwargs)
    if isinstance(stage, jax.stages.Compiled):
        raise TypeError("count_lowered needs a jax.stages.Lowered or a callable, not a Compiled executable "
                        "(its text is the optimized module; use count_matmuls)")
    try:
        text = stage.as_text(dialect="hlo", debug_info=True)   # debug_info keeps metadata op_name
    except TypeError:                                          # older jax: no debug_info keyword
        text = stage.as_text(dialect="hlo")
    return count_hlo_text(text, _cost_flops(stage))
