"""Mamba-1 (the selective scan), letter 'A', mixer and projection "mamba1": a state h [inner x state] per sequence
whose decay and input depend on the token, one channel at a time (no heads, no groups).

Per token, with d_in the inner width, N the state width, R the dt rank, K the conv width:
- in_proj D -> x and z (d_in each): 2 D (2 d_in);
- the causal depthwise conv over x (d_in channels, K taps; ``maxflops.families.conv``);
- x_proj d_in -> dt (R), B (N), C (N): 2 d_in (R + 2 N); dt_proj R -> d_in: 2 R d_in;
- the scan, per channel: h <- exp(dt A) h + dt B x (elementwise), y = h C (a read of the state: 2 N per channel),
  so ``mamba1_scan_flops`` = 2 per (channel, state) and token;
- the gate y silu(z) (elementwise) and out_proj d_in -> D.
Hardware: the recurrence as above, token by token (transformers' torch path); the conv by ``mamba_conv_impl``.
Decode: the same for the new token; the state and the conv's last K - 1 inputs read and written.
"""

from __future__ import annotations

from ...fields import field_of
from .. import conv
from ..mamba2 import COMPONENTS
from ..base import Family, Priced

MAMBA1 = "mamba1"


def widths(c):
    """(D, inner, state, dt rank, conv kernel)."""
    return (c["emb_dim"], c["mamba1_inner_dim"], c["mamba1_state_dim"], c["mamba1_dt_rank"],
            c["mamba1_conv_kernel"])


def projections(d: int, inner: int, state: int, rank: int) -> tuple[int, int]:
    """Per token: (in_proj + x_proj + dt_proj, out_proj)."""
    return 2 * d * 2 * inner + 2 * inner * (rank + 2 * state) + 2 * rank * inner, 2 * inner * d


def _project(p: Priced, c, tokens):
    d, inner, state, rank, _ = widths(c)
    proj_in, proj_out = projections(d, inner, state, rank)
    p.out["qkv_proj"] = proj_in * tokens
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, inner, state, _, K = widths(c)
    _project(p, c, tokens)
    conv.price(p, "ssm_conv", inner, K, c, seqs, decode, tokens)
    p.out["core_attention"] = c["mamba1_scan_flops"] * inner * state * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state read h C: its state gradient is an outer product


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, inner, state, _, K = widths(c)
    _project(p, c, tokens)
    conv.price_hardware(p, "ssm_conv", c["mamba_conv_impl"], inner, K, c, seqs, decode, tokens)
    p.out["core_attention"] = p.single["core_attention"] = 2 * inner * state * tokens
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's weights streamed, and per sequence the state (inner x state) with the conv's last K - 1 inputs,
    read and written."""
    _, inner, state, _, K = widths(c)
    return {"weights": inner * K * c["weight_bytes"],
            "state": 2 * (inner * state + (K - 1) * inner) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (MAMBA1, 0, False, 0) if letter == "A" else None


def check(c, letters: str, err) -> None:
    if "A" in letters and c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with Mamba-1 ('A') layers")


SCHEMA = {
    "mamba1_inner_dim": field_of(8192, int, "Mamba-1 inner width d_in (expand x hidden).", minimum=1),
    "mamba1_state_dim": field_of(16, int, "Mamba-1 state width N per channel (d_state).", minimum=1),
    "mamba1_dt_rank": field_of(256, int, "Mamba-1 dt rank R (x_proj's dt part, dt_proj R -> d_in).", minimum=1),
    "mamba1_conv_kernel": field_of(4, int, "Mamba-1's causal depthwise conv width over x.", minimum=1),
    "mamba1_scan_flops": field_of(2, int, "Model FLOPs of the Mamba-1 scan per channel, state element and token. Exact 2: "
                                    "the state read h C (the decay and the update are elementwise).", minimum=1),
}


FAMILY = Family(
    name="mamba1",
    letters={"A": "Mamba-1 (selective scan) state-space layer"},
    mixers={MAMBA1: "Mamba-1"},
    components=COMPONENTS,  # ssm_conv, shared with Mamba-2
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    projection=MAMBA1,
    check=check,
)
