"""A family's Flax model against XLA, for tests in any folder of tests/ (imports jax when called)."""

import maxflops


def engine_and_xla(base, mode: str, knobs: dict, docs=()) -> tuple:
    """(the engine's hardware FLOPs, XLA's matmul FLOPs) of the reduced Flax model of ``base`` in ``mode`` under
    ``knobs``; ``docs``: packed documents in one row of their total length."""
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    if docs:
        knobs = dict(knobs, per_device_batch_size=1, max_target_length=sum(docs))
    c, model, params, tokens = M.build(base, abstract=True, mode=mode, segment_lengths=docs, **knobs)
    b = maxflops.count(c, segment_lengths=list(docs) or None)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    return b.hardware_flops, count_lowered(fn, *args).matmul_flops
