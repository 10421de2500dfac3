"""Why a published figure differs from your count: the conventions that reproduce it, to its printed rounding.

    maxflops.explain(cfg, tflop_per_step="1721.22")                              # MaxText's log line
    maxflops.explain(cfg, mfu="46.2", peak_tflops="275", tokens_per_s="238.3e3", devices=6144)   # a paper's MFU
    maxflops.explain(cfg, flops="3.8e25", tokens="15.6e12")                      # a training run's total

A figure is given as it is printed (a string keeps its digits; a number is taken as printed by ``repr``): the
interval its rounding allows (half a unit of its last digit, each factor's) becomes an interval of FLOPs per token,
and every convention defined for the model (with and without its MTP modules, where it has them) is counted and
ranked by its distance to the figure. ``tokens_per_s`` and ``tflops_per_s`` are one device's, or the whole
cluster's with ``devices`` (an exact count: it adds no rounding); ``tflop_per_step`` is the config's per-device step.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal, InvalidOperation


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One way of counting: a convention (and a variant), its FLOPs per token, its ratio to the figure."""

    convention: str
    variant: str                  # "" or what else differs ("without MTP")
    flops_per_token: float
    ratio: float                  # this count / the figure's central value
    reproduces: bool              # inside the figure's rounding interval


@dataclasses.dataclass(frozen=True)
class Explanation:
    """A published figure as FLOPs per token (``low`` to ``high``: its printed rounding), maxflops' exact count, and
    every convention's count ranked by its distance to the figure (``candidates``)."""

    figure: str                   # the figure as given, in words
    low: float                    # FLOPs per token the figure's rounding allows
    high: float
    exact: float                  # maxflops' exact count, per token
    candidates: tuple             # of Candidate, nearest first

    @property
    def central(self) -> float:
        return (self.low + self.high) / 2

    def table(self) -> str:
        """The ranking as ``python -m maxflops explain`` prints it: the figure's interval, each candidate's FLOPs per
        token and ratio, which reproduce it, and the exact count."""
        lines = [f"{self.figure}: {self.central / 1e9:,.3f} GFLOP per token (rounding allows "
                 f"{self.low / 1e9:,.3f} to {self.high / 1e9:,.3f})",
                 f"{'convention':<26} {'variant':<16} {'GFLOP/token':>14} {'ratio':>9}  reproduces"]
        for c in self.candidates:
            lines.append(f"{c.convention:<26} {c.variant:<16} {c.flops_per_token / 1e9:>14,.3f} {c.ratio:>9.5f}  "
                         f"{'yes' if c.reproduces else ''}")
        hits = [c for c in self.candidates if c.reproduces]
        lines.append("reproduced by " + ", ".join(f"{c.convention}{' ' + c.variant if c.variant else ''}"
                                                  for c in hits) if hits else
                     "no convention reproduces it: its source counts something these do not (see "
                     "docs/explanation/conventions.md)")
        lines.append(f"exact (maxflops): {self.exact / 1e9:,.3f} GFLOP per token, "
                     f"{self.exact / self.central:.5f} of the figure")
        return "\n".join(lines)


def _interval(name: str, value) -> tuple[Decimal, Decimal]:
    """(low, high) a printed number stands for: half a unit of its last digit either side; a trailing '%' is
    dropped (an MFU in percent)."""
    text = str(value).strip().rstrip("%").replace(",", "").replace("_", "")
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{name}: {value!r} is not a number as printed") from None
    if not d.is_finite() or d <= 0:
        raise ValueError(f"{name}: {value!r}: a positive number")
    half = Decimal(1).scaleb(d.as_tuple().exponent) / 2
    return d - half, d + half


FORMS = {  # the figures each form takes, and FLOPs per token from their (low, high) ends
    ("tflop_per_step",): "TFLOP per device per step (the config's batch)",
    ("tflops_per_s", "tokens_per_s"): "TFLOP/s and tokens/s per device",
    ("mfu", "peak_tflops", "tokens_per_s"): "MFU (%), the peak (TFLOP/s) and tokens/s per device",
    ("flops", "tokens"): "total FLOPs over total tokens",
}


def explain(config, devices: int = 1, **figure) -> Explanation:
    """The conventions (and MTP counted or not) that reproduce a published figure of ``config``'s model, ranked
    (see the module doc for the forms a figure takes). ``config``: anything ``maxflops.count`` takes, in train mode."""
    from .account import count
    from .config import validate
    from .conventions import CONVENTIONS, convention_defined
    from .resolve import from_source

    form = next((f for f in FORMS if set(f) == set(figure)), None)
    if form is None:
        raise ValueError(f"explain: give one figure as printed, one of: "
                         + "; ".join(" + ".join(f) + f" ({why})" for f, why in FORMS.items())
                         + f"; got {', '.join(sorted(figure)) or 'nothing'}")
    if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
        raise ValueError(f"devices: {devices!r}; the number of devices a cluster's tokens/s is spread over")
    if devices > 1 and not {"tokens_per_s", "tflops_per_s"} & set(figure):
        raise ValueError("devices: divides a cluster's tokens/s or TFLOP/s; this figure has neither")
    ends = {k: _interval(k, v) for k, v in figure.items()}
    for k in ("tokens_per_s", "tflops_per_s"):
        if k in ends:
            ends[k] = tuple(x / devices for x in ends[k])
    c = validate(from_source(config))
    if c["mode"] != "train":
        raise ValueError(f"config key 'mode': {c['mode']!r}; a published MFU is a training figure (mode='train')")
    if form == ("tflop_per_step",):
        tokens_per_step = count(config).tokens
        per = lambda e: e["tflop_per_step"] * Decimal(10) ** 12 / tokens_per_step            # noqa: E731
    elif form == ("tflops_per_s", "tokens_per_s"):
        per = lambda e: e["tflops_per_s"] * Decimal(10) ** 12 / e["tokens_per_s"]             # noqa: E731
    elif form == ("mfu", "peak_tflops", "tokens_per_s"):
        per = lambda e: e["mfu"] / 100 * e["peak_tflops"] * Decimal(10) ** 12 / e["tokens_per_s"]   # noqa: E731
    else:
        per = lambda e: e["flops"] / e["tokens"]                                              # noqa: E731
    # FLOPs per token grows with the factors above the line and falls with those below: the interval's ends
    below = {"tokens_per_s", "tokens"}
    low = float(per({k: (hi if k in below else lo) for k, (lo, hi) in ends.items()}))
    high = float(per({k: (lo if k in below else hi) for k, (lo, hi) in ends.items()}))
    central = (low + high) / 2
    said = ", ".join(f"{k}={figure[k]}" for k in form) + (f" over {devices:,} devices" if devices > 1 else "")

    variants = [("", {})]
    if c["mtp_num_layers"]:
        variants.append(("without MTP", {"mtp_num_layers": 0}))
    out = []
    viewed = {variant: validate({**c, **knobs}) for variant, knobs in variants}
    for convention in CONVENTIONS:
        for variant, knobs in variants:
            if not convention_defined(viewed[variant], convention):  # (a convention without a rule for the model)
                continue
            b = count(config, convention=convention, **knobs)
            f = b.total / b.tokens
            out.append(Candidate(convention, variant, f, f / central, low <= f <= high))
    exact = next(x.flops_per_token for x in out if x.convention == "exact" and not x.variant)  # (always defined)
    out.sort(key=lambda x: (abs(x.ratio - 1), x.convention, x.variant))
    return Explanation(said, low, high, exact, tuple(out))
