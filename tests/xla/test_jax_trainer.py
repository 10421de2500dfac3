"""examples/jax_trainer.py: a Flax + optax trainer (nothing of maxflops' own model) whose compiled step, counted by
the program counter, equals the analytic count of the config that describes it, component by component; the
step reporter takes the program's figure as the hardware FLOPs."""

from __future__ import annotations

import pytest

import maxflops
from repo import jax_trainer_example

pytest.importorskip("optax")


_example = jax_trainer_example


def test_the_compiled_step_equals_the_config_per_component():
    from maxflops.xla import count_program, reconcile

    ex = _example()
    config, params, opt_state, step, batch, _ = ex.setup()
    program = count_program(step.lower(params, opt_state, batch).compile())
    b = maxflops.count(config)
    assert program.flops == b.hardware_flops and not program.not_counted
    rows = reconcile(b, program)
    assert {n for n, _, _ in rows} == {"qkv_proj", "out_proj", "core_attention", "mlp", "logits"}
    assert all(want == got for _, want, got in rows), rows
    assert program.cost_analysis is not None and program.cost_analysis != program.flops


def test_the_reporter_reports_the_programs_figure():
    ex = _example()
    config = maxflops.model_config(**ex.CONFIG, mode="train")
    r = maxflops.StepReporter(config, peak_tflops=100.0, program_flops=123_456_789)
    import numpy as np

    batch = ex.packed_batch(np.random.default_rng(0), 2, 64, 256)
    s = r.step(0.5, segment_ids=batch["segment_ids"])
    assert s.hardware_flops == 123_456_789 and s.model_flops == r.breakdown(segment_ids=batch["segment_ids"]).total
    for bad in (0, -5, 1.5, True, "1e9"):
        with pytest.raises(ValueError, match="program_flops"):
            maxflops.StepReporter(config, peak_tflops=100.0, program_flops=bad)
