"""A device's peak as the reporter and the bench take it: TFLOP/s per device, checked for the unit slips people
make (a FLOP/s figure typed where TFLOP/s is asked gives an MFU of 0.00%)."""

from __future__ import annotations

import math

# Above any device's dense peak at any precision (the largest today are tens of thousands of TFLOP/s at FP4): a
# larger figure is in another unit.
MAX_TFLOPS = 100_000


def check_peak_tflops(value, name: str = "peak_tflops") -> float:
    """``value`` as a peak in TFLOP/s per device, or a ValueError naming ``name`` and the value."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        raise ValueError(f"{name}: must be a positive finite number (the device's dense peak in TFLOP/s), got "
                         f"{value!r}")
    if value > MAX_TFLOPS:
        tera = value / 1e12
        raise ValueError(f"{name}={value!r} is above any device's peak in TFLOP/s ({MAX_TFLOPS:,}): it looks like "
                         f"FLOP/s; give {tera:g} (TFLOP/s)" if tera >= 1 else
                         f"{name}={value!r} is above any device's peak in TFLOP/s ({MAX_TFLOPS:,}): give the peak in "
                         "TFLOP/s (H100/H200 bf16 dense: 989)")
    return float(value)
