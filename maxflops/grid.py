"""Sweeps over a grid of lengths and batches, fast and exact: ``sweep_grid(config, lengths, batches)``.

Every figure of a step of full sequences is linear in the batch: the tokens, the attended pairs and every matmul
grow with the number of rows, per row the same. So each length is priced once for one row (unrounded, as ``count``
prices it), and each batch of that length is the one-row figures times the batch, rounded per component as
``count`` rounds them: the same integers as ``count`` at every point (``tests/core/test_grid.py`` holds them to it).
Where a figure is not linear in the batch, every point is a ``count``: in decode (its MoE dispatch group is the
whole batch) and for a batch that is not a whole number of rows.

    grid = maxflops.sweep_grid(cfg, lengths=range(1024, 1_048_577, 1024), batches=range(1, 1001))
    grid.total[i][j], grid.hardware[i][j]          # FLOPs at lengths[i], batches[j]
    grid.write_csv("grid.csv")

The axes: ``max_target_length`` (``decode_kv_length`` in decode) and ``per_device_batch_size``; any other key is
fixed for the grid (give it as an override, and sweep it with one grid per value).
"""

from __future__ import annotations

import csv
import dataclasses
from fractions import Fraction
from typing import Callable, Sequence

from .account import hardware_raw, head_raw, model_raw, vision_raw, count
from .resolve import hardware_view, plan_of, resolve_call
from .sequences import Uniform
from .training import head_passes

__all__ = ["Grid", "sweep_grid"]


@dataclasses.dataclass(frozen=True)
class Grid:
    model_name: str
    mode: str
    convention: str
    length_key: str  # "max_target_length", or "decode_kv_length" in decode
    lengths: tuple
    batches: tuple
    total: list  # total[i][j]: model FLOPs per device per step at lengths[i], batches[j]
    hardware: list | None  # the same for hardware FLOPs (None when not asked for)
    tokens: list  # tokens[i][j] the step counts

    def per_token(self, i: int, j: int) -> float:
        """Model FLOPs per token at length ``lengths[i]`` and batch ``batches[j]``."""
        return self.total[i][j] / self.tokens[i][j]

    def rows(self):
        """One dict per grid point, lengths outer."""
        for i, L in enumerate(self.lengths):
            for j, b in enumerate(self.batches):
                row = {self.length_key: L, "per_device_batch_size": b, "tokens": self.tokens[i][j],
                       "model_flops": self.total[i][j]}
                if self.hardware is not None:
                    row["hardware_flops"] = self.hardware[i][j]
                yield row

    def write_csv(self, path) -> None:
        """Every grid point as one CSV row (the columns of ``rows()``), lengths outer, to ``path``."""
        with open(path, "w", newline="") as f:
            rows = self.rows()
            first = next(rows)
            w = csv.DictWriter(f, fieldnames=list(first))
            w.writeheader()
            w.writerow(first)
            w.writerows(rows)


def _scaler(parts: list) -> Callable[[int], int]:
    """A function of the batch b: the sum of (multiplicity, value) parts at b, each value times b rounded as
    ``count`` rounds it (half to even). Integer parts add up once; a Fraction p/q at b rounds b*p/q in integers."""
    whole = sum(n * v for n, v in parts if type(v) is int)
    fractions = []
    for n, v in parts:
        if type(v) is not int:
            f = Fraction(v)
            fractions.append((n, f.numerator, f.denominator))
    if not fractions:
        return lambda b: whole * b

    def at(b: int) -> int:
        total = whole * b
        for n, p, q in fractions:
            m, r = divmod(b * p, q)
            if 2 * r > q or (2 * r == q and m & 1):
                m += 1
            total += n * m
        return total

    return at


def _one_row(c, plan, L: int, hardware: bool) -> tuple:
    """(model parts, hardware parts): [(multiplicity, unrounded value)] of every component of one full row of L
    tokens (a train or prefill step; ``c`` resolved at per_device_batch_size 1)."""
    decode = False
    steps = c["gradient_accumulation_steps"] if c["mode"] == "train" else 1
    seqs = Uniform(L, 1)
    parts = [(n, v) for kind, n in zip(plan.kinds, plan.multiplicity)
             for v in model_raw(kind, c, seqs, decode, steps).values()]
    parts += [(1, v) for v in head_raw(c, L * head_passes(c, steps)).values()]
    parts += [(1, v) for v in vision_raw(c, c["mode"], steps).values()]
    if not hardware:
        return parts, None
    hw = hardware_view(c)
    hw_plan = plan_of(hw)
    hw_parts = [(n, v) for kind, n in zip(hw_plan.kinds, hw_plan.multiplicity)
                for v in hardware_raw(kind, hw, seqs, decode, steps).values()]
    hw_parts += [(1, v) for v in head_raw(hw, L * head_passes(hw, steps), True).values()]
    hw_parts += [(1, v) for v in vision_raw(hw, hw["mode"], steps).values()]
    return parts, hw_parts


def sweep_grid(config, lengths: Sequence[int], batches: Sequence, hardware: bool = True,
               progress: Callable[[int, int], None] | None = None, **overrides) -> Grid:
    """Model (and hardware) FLOPs at every (length, batch) of the grid; the same integers as
    ``count(config, max_target_length=L, per_device_batch_size=b, **overrides)`` (``decode_kv_length`` in decode).
    ``progress(done, total)`` is called as lengths complete."""
    lengths, batches = tuple(int(L) for L in lengths), tuple(batches)
    if not lengths or not batches:
        raise ValueError("sweep_grid: give at least one length and one batch")
    c0, _ = resolve_call(config, overrides)
    decode = c0["mode"] == "decode"
    key = "decode_kv_length" if decode else "max_target_length"
    steps = c0["gradient_accumulation_steps"] if c0["mode"] == "train" else 1
    whole = all(isinstance(b, int) and not isinstance(b, bool) or (isinstance(b, float) and b.is_integer())
                for b in batches)
    total, hw_total, tokens = [], [] if hardware else None, []
    for i, L in enumerate(lengths):
        if decode or not whole or c0["prompt_tokens"]:  # not linear in the batch (or prompt tokens): every point
            row = [count(config, **{**overrides, key: L, "per_device_batch_size": b}) for b in batches]
            total.append([r.total for r in row])
            if hardware:
                hw_total.append([r.hardware_flops for r in row])
            tokens.append([r.tokens for r in row])
        else:
            c, plan = resolve_call(config, {**overrides, key: L, "per_device_batch_size": 1})
            parts, hw_parts = _one_row(c, plan, L, hardware)
            bs = [int(b) for b in batches]
            total.append(list(map(_scaler(parts), bs)))
            if hardware:
                hw_total.append(list(map(_scaler(hw_parts), bs)))
            tokens.append([L * b * steps for b in bs])
        if progress is not None:
            progress((i + 1) * len(batches), len(lengths) * len(batches))
    return Grid(c0["model_name"], c0["mode"], c0["convention"], key, lengths, batches, total, hw_total, tokens)
