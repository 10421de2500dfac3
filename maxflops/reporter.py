"""Per-step TFLOP/s and MFU for a MaxText-style training loop (the text of a count is ``maxflops.report``).

    reporter = maxflops.StepReporter(config, peak_tflops=989)        # once
    ...
    stats = reporter.step(step_seconds, segment_ids=batch["inputs_segmentation"])   # every step
    reporter.log(step, stats)                                         # one line on stdout (or emit=logging.info)

Without document information every step costs the padded batch of the config; with ``segment_lengths`` (the
documents of the step's micro-batch) or ``segment_ids`` (MaxText's [batch, length] ids, 0 = padding) the count
is exact per document. Model MFU uses model FLOPs (the MFU numerator); hardware MFU uses what the kernels
execute under the config's implementation knobs.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Callable

from .account import count
from .config import as_dict, validate
from .resolve import from_source
from .sequences import segment_lengths_from_ids

__all__ = ["StepReporter", "StepStats", "segment_lengths_from_ids"]


@dataclasses.dataclass(frozen=True)
class StepStats:
    seconds: float
    tokens: int
    model_flops: int  # per device per step
    hardware_flops: int
    model_tflops_per_s: float  # per device
    hardware_tflops_per_s: float
    model_mfu: float  # fraction of peak
    hardware_mfu: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class StepReporter:
    """Constructed once from a config and the device peak; ``step()`` per training step."""

    def __init__(self, config, peak_tflops: float, **overrides):
        if not _positive(peak_tflops):
            raise ValueError(f"peak_tflops: must be a positive finite number (the device's dense peak in TFLOP/s), "
                             f"got {peak_tflops!r}")
        self.config = from_source(config)  # MaxText's object as it is, like count()
        self.overrides = overrides
        self.peak = peak_tflops * 1e12
        self._padded = count(self.config, **overrides)
        if self._padded.mode != "train":
            raise ValueError(f"config key 'mode': StepReporter reports train steps, got {self._padded.mode!r}")
        resolved = validate({**as_dict(self.config), **overrides}, given=overrides)
        self._steps, self._batch = resolved["gradient_accumulation_steps"], resolved["per_device_batch_size"]

    def breakdown(self, segment_lengths=None, segment_ids=None):
        """The step's FLOPs. ``segment_ids`` [rows, length] or ``segment_lengths`` hold the documents of the whole
        step: with gradient accumulation, every micro-batch's rows (counted once each, not one micro-batch
        multiplied)."""
        if segment_ids is not None:
            if segment_lengths is not None:
                raise ValueError("segment_ids and segment_lengths: give one of them, not both")
            segment_lengths = segment_lengths_from_ids(segment_ids)
            if not len(segment_lengths):
                raise ValueError("segment_ids: every id is 0 (padding): the step holds no document to count")
        if segment_lengths is None:
            return self._padded
        steps = self._steps
        if steps == 1:
            return count(self.config, segment_lengths, **self.overrides)
        return count(self.config, segment_lengths, **{**self.overrides, "gradient_accumulation_steps": 1,
                                                      "per_device_batch_size": self._batch * steps})

    def step(self, seconds: float, segment_lengths=None, segment_ids=None) -> StepStats:
        if not _positive(seconds):
            raise ValueError(f"seconds: step time must be a positive finite number, got {seconds!r}")
        b = self.breakdown(segment_lengths, segment_ids)
        model, hardware = b.total, b.hardware_flops
        return StepStats(seconds, b.tokens, model, hardware, model / seconds / 1e12, hardware / seconds / 1e12,
                         model / seconds / self.peak, hardware / seconds / self.peak)

    @staticmethod
    def format(step: int, s: StepStats) -> str:
        return (f"step {step}: {s.seconds:.3f} s, {s.tokens} tokens, {s.model_tflops_per_s:,.1f} TFLOP/s/device, "
                f"model MFU {100 * s.model_mfu:.2f}%, hardware MFU {100 * s.hardware_mfu:.2f}%")

    def log(self, step: int, stats: StepStats, emit: Callable[[str], object] | None = None) -> str:
        """Write the step's line and return it. ``emit``: where it goes; by default printed to stdout (flushed), as
        MaxText's trainer prints its own step lines; pass ``absl.logging.info`` (or any logger's method) to log it
        instead (absl shows INFO only when told to, e.g. ``--alsologtostderr``)."""
        line = self.format(step, stats)
        if emit is None:
            print(line, flush=True)
        else:
            emit(line)
        return line


def _positive(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) and x > 0
