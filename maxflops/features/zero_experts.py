"""Zero-computation experts (LongCat-Flash): ``zero_experts`` identity experts the router scores beside the routed
ones; a top-k slot routed to one runs no matmul (``maxflops.pricing.routed_slots``: the share ``zero_expert_share``
gives them, or uniform routing's)."""

from __future__ import annotations

from ..fields import field_of
from .base import Feature, register

SCHEMA = {
    "zero_experts": field_of(0, int, "Zero-computation (identity) experts the router scores beside num_experts "
                                     "(LongCat-Flash): the router is D -> num_experts + zero_experts; a slot routed "
                                     "to one runs no matmul.", minimum=0),
    "zero_expert_share": field_of(-1.0, float, "With zero_experts: the share of the top-k slots routed to them (what "
                                               "training measured; -1: zero_experts / (num_experts + zero_experts), "
                                               "as uniform routing would give). The routed experts run the other "
                                               "slots (an expected count: the component is rounded to the FLOP)."),
}


def check(c, err) -> None:
    if c["zero_experts"]:
        if c["num_experts"] < 2:
            err("zero_experts", f"{c['zero_experts']} without routed experts (num_experts={c['num_experts']})")
        if not (c["zero_expert_share"] == -1 or 0 <= c["zero_expert_share"] <= 1):
            err("zero_expert_share", f"{c['zero_expert_share']!r}: a share of the slots in [0, 1], or -1 (uniform)")
        if c["moe_impl"] == "capacity":
            err("moe_impl", "'capacity' with zero_experts: a dispatch with identity experts is not modelled")


FEATURE = register(Feature(
    "zero_experts", "identity experts the router scores beside the routed ones (LongCat-Flash)", SCHEMA,
    switches=("zero_experts",), on=lambda c: bool(c["zero_experts"]) and c["num_experts"] > 1,
    off="the model has no zero-computation experts beside routed ones (zero_experts = 0 or num_experts = 1)",
    check=check))
