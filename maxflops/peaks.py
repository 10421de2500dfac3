"""A device's peak as the reporter and the bench take it: TFLOP/s per device, checked for the unit slips people
make (a FLOP/s figure typed where TFLOP/s is asked gives an MFU of 0.00%), and the one table of dense peaks per
chip and dtype (no structured sparsity) and of HBM bandwidths, matched from ``jax.devices()[0].device_kind``.

Figures are per chip (a TPU chip, one GPU). Where a vendor quotes only the sparse figure, the dense one is half.
Bandwidths are the vendors' HBM figures in bytes/s (decimal: 1 TB/s = 1e12 B/s). Plain Python: no jax here.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys

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


T = 1e12

# (pattern over the lower-cased device_kind, name, {dtype: FLOP/s}); first match wins, so specific names first.
PEAKS = [
    # Google Cloud TPU v4 docs: 275 TFLOPs bf16 (and int8) per chip.
    (r"tpu v4", "TPU v4", {"bfloat16": 275 * T, "float32": 275 * T / 2}),
    # Google Cloud TPU v5e docs: 197 TFLOPs bf16, 394 TOPs int8 per chip.
    (r"tpu v5 ?lite|tpu v5e", "TPU v5e", {"bfloat16": 197 * T, "int8": 394 * T}),
    # Google Cloud TPU v5p docs: 459 TFLOPs bf16, 918 TOPs int8 per chip.
    (r"tpu v5p|tpu v5$", "TPU v5p", {"bfloat16": 459 * T, "int8": 918 * T}),
    # Google Cloud TPU v6e (Trillium) docs: 918 TFLOPs bf16, 1836 TOPs int8 per chip.
    (r"tpu v6|trillium", "TPU v6e", {"bfloat16": 918 * T, "int8": 1836 * T}),
    # Google Cloud Next 2025, Ironwood (TPU v7): 4,614 TFLOPs fp8 per chip; bf16 at half rate.
    (r"tpu7|tpu v7|ironwood", "TPU v7 (Ironwood)", {"float8": 4614 * T, "bfloat16": 2307 * T}),
    # NVIDIA A100 datasheet (SXM): bf16 312 TFLOPS dense, tf32 156, fp32 19.5.
    (r"a100", "NVIDIA A100", {"bfloat16": 312 * T, "tf32": 156 * T, "float32": 19.5 * T}),
    # NVIDIA H200 datasheet, NVL (PCIe card): bf16 1,671 TFLOPS sparse -> 835.5 dense, fp8 1,670.5, tf32 417.5, fp32 60.
    (r"h200.*nvl", "NVIDIA H200 NVL", {"bfloat16": 835.5 * T, "float8": 1670.5 * T, "tf32": 417.5 * T,
                                      "float32": 60 * T}),
    # NVIDIA H200 datasheet (SXM): same tensor cores as H100 SXM: bf16 989 dense (1,979 sparse), fp8 1,979.
    (r"h200", "NVIDIA H200", {"bfloat16": 989 * T, "float8": 1979 * T, "tf32": 494.5 * T, "float32": 67 * T}),
    # NVIDIA H100 datasheet, the two PCIe cards (jax's device_kind 'NVIDIA H100 NVL', 'NVIDIA H100 PCIe'): NVL bf16
    # 1,671 TFLOPS sparse -> 835.5 dense, fp8 1,670.5, tf32 417.5, fp32 60; PCIe bf16 1,513 -> 756.5, fp8 1,513,
    # tf32 378, fp32 51. (torchtitan's table: 835 and 756.)
    (r"h100.*nvl", "NVIDIA H100 NVL", {"bfloat16": 835.5 * T, "float8": 1670.5 * T, "tf32": 417.5 * T,
                                      "float32": 60 * T}),
    (r"h100.*pcie", "NVIDIA H100 PCIe", {"bfloat16": 756.5 * T, "float8": 1513 * T, "tf32": 378 * T,
                                        "float32": 51 * T}),
    # NVIDIA H100 datasheet (SXM): bf16 989 TFLOPS dense (1,979 sparse), fp8 1,979, tf32 494.5, fp32 67.
    (r"h100", "NVIDIA H100", {"bfloat16": 989 * T, "float8": 1979 * T, "tf32": 494.5 * T, "float32": 67 * T}),
    # NVIDIA GB200 NVL72 datasheet: 180 PFLOPS bf16 dense per 72 GPUs -> 2.5 PFLOPS per GPU; fp8 5.
    (r"gb200", "NVIDIA GB200", {"bfloat16": 2500 * T, "float8": 5000 * T}),
    # NVIDIA B200 (HGX B200) datasheet: bf16 4.5 PFLOPS sparse -> 2.25 dense; fp8 4.5 dense.
    (r"b200", "NVIDIA B200", {"bfloat16": 2250 * T, "float8": 4500 * T}),
    # AMD Instinct MI355X: CDNA 4, 256 CUs x 4,096 bf16 FLOP/clock x 2.4 GHz = 2,516.6 TFLOPS dense; fp8 2x.
    (r"mi355", "AMD MI355X", {"bfloat16": 2516.6 * T, "float8": 5033.2 * T}),
    # AMD Instinct MI300X datasheet: bf16 1,307.4 TFLOPS dense, fp8 2,614.9.
    (r"mi300x", "AMD MI300X", {"bfloat16": 1307.4 * T, "float8": 2614.9 * T}),
]


G = 1e9

# (pattern over the lower-cased device_kind, HBM bytes/s); first match wins, so specific names first.
BANDWIDTHS = [
    # Google Cloud TPU docs, system architecture pages: v4 1,200 GBps, v5e 819 GBps, v5p 2,765 GBps, v6e 1,640 GBps.
    (r"tpu v4", 1200 * G),
    (r"tpu v5 ?lite|tpu v5e", 819 * G),
    (r"tpu v5p|tpu v5$", 2765 * G),
    (r"tpu v6|trillium", 1640 * G),
    # Google Cloud Next 2025, Ironwood: 7.37 TB/s of HBM bandwidth per chip.
    (r"tpu7|tpu v7|ironwood", 7370 * G),
    # NVIDIA A100 datasheet: 1,555 GB/s (40GB), 2,039 GB/s (80GB SXM).
    (r"a100.*40gb", 1555 * G),
    (r"a100", 2039 * G),
    # NVIDIA H200 datasheet (SXM): 4.8 TB/s.
    (r"h200", 4800 * G),
    # NVIDIA H100 datasheet: 3.35 TB/s (SXM), 3.9 TB/s (NVL), 2 TB/s (PCIe).
    (r"h100.*nvl", 3900 * G),
    (r"h100.*pcie", 2000 * G),
    (r"h100", 3350 * G),
    # NVIDIA GB200 NVL72 datasheet: 576 TB/s per 72 GPUs -> 8 TB/s; HGX B200: 8 TB/s per GPU.
    (r"gb200", 8000 * G),
    (r"b200", 8000 * G),
    # AMD Instinct MI355X: 8 TB/s; MI300X datasheet: 5.3 TB/s.
    (r"mi355", 8000 * G),
    (r"mi300x", 5300 * G),
]


def bandwidth(device_kind: str) -> float | None:
    """Peak HBM bytes/s of a device kind, or None when the chip is not in the table."""
    kind = device_kind.lower().strip()
    for pattern, bytes_per_s in BANDWIDTHS:
        if re.search(pattern, kind):
            return bytes_per_s
    return None


def lookup(device_kind: str, dtype: str = "bfloat16"):
    """(name, peak FLOP/s, dtype used) for a device kind, or None when the chip is not in the table. For a
    dtype the chip has no entry for, its bfloat16 peak is returned and the dtype says so."""
    kind = device_kind.lower().strip()
    for pattern, name, table in PEAKS:
        if re.search(pattern, kind):
            if dtype in table:
                return name, table[dtype], dtype
            return name, table["bfloat16"], "bfloat16"
    return None


@dataclasses.dataclass(frozen=True)
class DevicePeak:
    """The peak a step is measured against, and where it came from."""

    tflops: float          # dense TFLOP/s per device
    chip: str              # the table's name for the chip
    dtype: str             # the dtype whose peak this is
    said: str              # one line: which peak, from what

    def __str__(self) -> str:
        return self.said


# the names a step's compute dtype goes by, to the table's keys
_DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp8": "float8", "float8": "float8", "float8_e4m3fn": "float8",
           "float8_e5m2": "float8", "nanoo_fp8": "float8", "fp8_full": "float8", "int8": "int8", "int8w": "int8",
           "fp32": "float32", "float32": "float32", "f32": "float32", "tf32": "tf32", "fp16": "bfloat16",
           "float16": "bfloat16"}


def device_peak(device_kind: str | None = None, dtype: str = "bfloat16") -> DevicePeak:
    """The dense peak of a device kind (``jax.devices()[0].device_kind`` when None: a trainer's jax) for the
    dtype a step computes in (bf16, fp8, int8, fp32; float16 runs at bfloat16's rate). A chip the table has no
    entry for that dtype takes its bfloat16 peak, said; a device not in the table is one ValueError saying how to
    give the peak instead."""
    if device_kind is None:          # the running trainer's jax (the analytic core never imports it)
        jax = sys.modules.get("jax")
        if jax is None:
            raise ValueError("peak_tflops='auto' reads the device from jax, which this process has not imported: "
                             "give the device kind (maxflops.peaks.device_peak('NVIDIA H100 80GB HBM3')) or "
                             "peak_tflops=<TFLOP/s>")
        device_kind = jax.devices()[0].device_kind
    key = _DTYPES.get(str(dtype).lower())
    if key is None:
        raise ValueError(f"compute dtype {dtype!r}: expected one of {sorted(set(_DTYPES))}")
    found = lookup(device_kind, key)
    if found is None:
        raise ValueError(f"device {device_kind!r} is not in maxflops' peak table (maxflops/peaks.py: "
                         f"{', '.join(name for _, name, _ in PEAKS)}): give peak_tflops=<its dense peak in TFLOP/s "
                         "for the dtype the step computes in>")
    chip, flops, used = found
    note = "" if used == key else f" (the table has no {key} peak for it: its {used} peak)"
    said = f"{chip} dense {used} peak, {flops / T:,.1f} TFLOP/s{note}, for device kind {device_kind!r}"
    return DevicePeak(flops / T, chip, used, said)
