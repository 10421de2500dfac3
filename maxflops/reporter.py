"""Per-step TFLOP/s and MFU for a MaxText-style training loop (the text of a count is ``maxflops.report``).

    reporter = maxflops.StepReporter(config, peak_tflops="auto")     # once: the device's dense peak, from the table
    ...
    stats = reporter.step(step_seconds, segment_ids=batch["inputs_segmentation"])   # every step
    reporter.log(step, stats)                                         # one line on stdout (or emit=logging.info)

Without document information every step costs the padded batch of the config; with ``step_lengths`` (the
documents of the whole step: every micro-batch's) or ``segment_ids`` (MaxText's [rows, length] ids, 0 = padding)
the count is exact per document. Model MFU uses model FLOPs (the MFU numerator); hardware MFU uses what the
kernels execute under the config's implementation knobs. Packed rows are priced, by default, as MaxText's trainer
runs them (``packed_kernel='row'``: every row through every layer whole, attention over the full row with the
documents masked); a trainer whose kernels run each document on its own passes ``packed_kernel='varlen'``. The
step line and ``StepStats.packed_kernel`` say which was used. A step of padding only is zero work, not an error.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Callable

from .account import count
from .config import as_dict, validate
from .peaks import check_peak_tflops, device_peak
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
    packed_kernel: str | None = None  # how packed rows were priced ('row', 'varlen'); None: no documents given

    @property
    def over_peak(self) -> bool:
        """An MFU above 100%: the peak given is not the device's (or the step time is wrong)."""
        return self.model_mfu > 1 or self.hardware_mfu > 1

    def to_dict(self) -> dict:
        """The step's figures as plain JSON types (for a trainer's metrics logger)."""
        return dataclasses.asdict(self)


class StepReporter:
    """Constructed once from a config and the device peak; ``step()`` per training step."""

    def __init__(self, config, peak_tflops, *, packed_kernel: str = "row", program_flops: int | None = None,
                 compute_dtype: str | None = None, **overrides):
        """``peak_tflops``: the device's dense peak in TFLOP/s, or ``"auto"``: read from maxflops' peak table
        (:func:`maxflops.peaks.device_peak`) for ``jax.devices()[0]`` and the step's compute dtype
        (``compute_dtype``, else a MaxText config's ``quantization`` or ``dtype``, else bfloat16); which peak was
        taken is ``peak_said``, and the first logged line says it. ``program_flops``: the compiled step's own FLOPs
        per device (``maxflops.xla.count_program(step, *args).flops``, counted once when the step compiles),
        reported as every step's hardware FLOPs in place of the analytic hardware figure; the model FLOPs (the MFU
        numerator) stay the config's."""
        self.peak_said = None
        if peak_tflops == "auto":
            found = device_peak(None, compute_dtype or _compute_dtype(config))
            peak_tflops, self.peak_said = found.tflops, found.said
        elif compute_dtype is not None:
            raise ValueError("compute_dtype: read only with peak_tflops='auto' (a peak given is taken as it is)")
        elif isinstance(peak_tflops, str):
            raise ValueError(f"peak_tflops: {peak_tflops!r}; give the device's dense peak in TFLOP/s or 'auto'")
        check_peak_tflops(peak_tflops)
        if program_flops is not None and (isinstance(program_flops, bool) or not isinstance(program_flops, int)
                                          or program_flops <= 0):
            raise ValueError(f"program_flops: the compiled step's FLOPs, a positive int "
                             f"(maxflops.xla.count_program(...).flops), got {program_flops!r}")
        self.program_flops = program_flops
        if packed_kernel not in ("row", "varlen"):
            raise ValueError(f"packed_kernel: {packed_kernel!r} is not 'row' (MaxText's trainer: rows whole) or "
                             "'varlen' (each document on its own)")
        self.config = from_source(config)  # MaxText's object as it is, like count()
        self.overrides = overrides
        self.packed_kernel = packed_kernel
        self._packed_overrides = {**overrides, "packed_kernel": packed_kernel}
        self.peak_tflops = peak_tflops
        self.peak = peak_tflops * 1e12
        self._warned = False
        self._said = False
        self._padded = count(self.config, **overrides)
        if self._padded.mode != "train":
            raise ValueError(f"config key 'mode': StepReporter reports train steps, got {self._padded.mode!r}")
        resolved = validate({**as_dict(self.config), **overrides}, given=overrides)
        self._steps, self._batch = resolved["gradient_accumulation_steps"], resolved["per_device_batch_size"]

    def _lengths(self, step_lengths, segment_ids, segment_lengths):
        if segment_lengths is not None:  # count()'s name: one micro-batch's documents
            if self._steps != 1:
                raise ValueError(f"segment_lengths: in count() the documents of one micro-batch; a step of "
                                 f"gradient_accumulation_steps={self._steps} micro-batches takes the documents of "
                                 "all of them as step_lengths=")
            if step_lengths is not None:
                raise ValueError("step_lengths and segment_lengths: give one of them, not both")
            step_lengths = segment_lengths
        if segment_ids is not None:
            if step_lengths is not None:
                raise ValueError("segment_ids and step_lengths: give one of them, not both")
            step_lengths = segment_lengths_from_ids(segment_ids)
        if step_lengths is not None and not hasattr(step_lengths, "__len__"):
            step_lengths = list(step_lengths)  # a generator of lengths
        return step_lengths

    def breakdown(self, step_lengths=None, segment_ids=None, *, segment_lengths=None):
        """The step's FLOPs. ``segment_ids`` [rows, length] or ``step_lengths`` hold the documents of the whole
        step: with gradient accumulation, every micro-batch's rows (counted once each, not one micro-batch
        multiplied). ``segment_lengths`` (count()'s name for one micro-batch's) is taken without accumulation."""
        step_lengths = self._lengths(step_lengths, segment_ids, segment_lengths)
        if step_lengths is None:
            return self._padded
        if segment_ids is not None and not len(step_lengths):
            raise ValueError("segment_ids: every id is 0 (padding): the step holds no document to count")
        steps = self._steps
        if steps == 1:
            return count(self.config, step_lengths, **self._packed_overrides)
        return count(self.config, step_lengths, **{**self._packed_overrides, "gradient_accumulation_steps": 1,
                                                   "per_device_batch_size": self._batch * steps})

    def step(self, seconds: float, step_lengths=None, segment_ids=None, *, segment_lengths=None) -> StepStats:
        """The figures of one training step that took ``seconds``: model and hardware FLOPs per device, TFLOP/s and
        MFU against the peak. A packed step gives its documents: ``step_lengths`` (every document of the step's
        micro-batches), ``segment_ids`` (the batch's segment-id array, documents read from it), or
        ``segment_lengths`` (one micro-batch's, as ``count()`` takes them); none of them: the configured rows,
        padded. Warns once if an MFU comes out over 100% (a peak or a step time in the wrong unit)."""
        if not _positive(seconds):
            raise ValueError(f"seconds: step time must be a positive finite number, got {seconds!r}")
        lengths = self._lengths(step_lengths, segment_ids, segment_lengths)
        kernel = None if lengths is None else self.packed_kernel
        if lengths is not None and not len(lengths):  # padding only (an epoch's padded tail): no work
            return StepStats(seconds, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, kernel)
        b = self._padded if lengths is None else self.breakdown(lengths)
        model, hardware = b.total, b.hardware_flops if self.program_flops is None else self.program_flops
        stats = StepStats(seconds, b.tokens, model, hardware, model / seconds / 1e12, hardware / seconds / 1e12,
                          model / seconds / self.peak, hardware / seconds / self.peak, kernel)
        if stats.over_peak and not self._warned:
            import warnings

            self._warned = True
            warnings.warn(f"StepReporter: MFU {100 * max(stats.model_mfu, stats.hardware_mfu):,.1f}% is over 100%: "
                          f"is peak_tflops={self.peak_tflops!r} the device's dense peak in TFLOP/s (H100/H200 bf16: "
                          "989), and the step time in seconds?", stacklevel=2)
        return stats

    @staticmethod
    def format(step: int, s: StepStats) -> str:
        """One log line for step ``step``: seconds, tokens, TFLOP/s per device, model and hardware MFU."""
        packing = {None: "", "row": " (packed rows priced whole)",
                   "varlen": " (packed documents priced varlen)"}[s.packed_kernel]
        flag = " [MFU over 100%: check peak_tflops and the step time]" if s.over_peak else ""
        return (f"step {step}: {s.seconds:.3f} s, {s.tokens} tokens, {s.model_tflops_per_s:,.1f} TFLOP/s/device, "
                f"model MFU {100 * s.model_mfu:.2f}%, hardware MFU {100 * s.hardware_mfu:.2f}%{packing}{flag}")

    def log(self, step: int, stats: StepStats, emit: Callable[[str], object] | None = None) -> str:
        """Write the step's line and return it. ``emit``: where it goes; by default printed to stdout (flushed), as
        MaxText's trainer prints its own step lines; pass ``absl.logging.info`` (or any logger's method) to log it
        instead (absl shows INFO only when told to, e.g. ``--alsologtostderr``)."""
        line = self.format(step, stats)
        if self.peak_said and not self._said:         # once: which peak the MFU is of
            self._said = True
            line = f"MFU against the {self.peak_said}\n{line}"
        if emit is None:
            print(line, flush=True)
        else:
            emit(line)
        return line


def _compute_dtype(config) -> str:
    """The dtype a step's matmuls run in, as its config says: MaxText's ``quantization`` (int8, fp8, ...) when set,
    else its ``dtype``; bfloat16 for a config that says neither."""
    get = config.get if isinstance(config, dict) else lambda k, d=None: getattr(config, k, d)
    try:
        quantization, dtype = get("quantization", None), get("dtype", None)
    except (AttributeError, KeyError, TypeError):   # a config object that answers neither key
        quantization = dtype = None
    value = quantization or dtype or "bfloat16"
    return str(getattr(value, "__name__", None) or getattr(value, "name", None) or value)   # a jnp dtype by name


def _positive(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) and x > 0
