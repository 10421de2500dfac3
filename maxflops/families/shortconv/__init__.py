"""The gated short convolution (LFM2's ``Lfm2ShortConv``), letter 'V', mixer and projection "short_conv": a causal
depthwise conv over the hidden channels, gated before and after, with no state beyond the conv's last inputs.

Per token, with D the hidden width and K the conv width (``short_conv_kernel``, LFM2's conv_L_cache):
- in_proj D -> B, C, x (3 D): 2 D (3 D) (``qkv_proj``);
- B x (elementwise), then the causal depthwise conv over its D channels (``short_conv``: 2 per channel and tap, the
  non-padding taps; ``maxflops.families.conv``);
- C times the conv's output (elementwise), then out_proj D -> D: 2 D D (``out_proj``).
Nothing in it mixes tokens but the conv, whose FLOPs are weight FLOPs: a short-conv layer has no attention FLOPs.
Hardware: the same, the conv by ``short_conv_impl`` (transformers' torch path pads it by K - 1 on both sides).
Decode: the same for the new token; the conv's last K - 1 inputs read and written, its kernel streamed.
"""

from __future__ import annotations

from ...components import WEIGHT, Component
from ...fields import field_of
from .. import conv
from ..base import Family, Priced

SHORT_CONV = "short_conv"

COMPONENTS = (Component("short_conv", WEIGHT, 97, "a gated short conv's causal depthwise conv (LFM2)"),)


def projections(d: int) -> tuple[int, int]:
    """Per token: (in_proj D -> 3 D, out_proj D -> D)."""
    return 2 * d * 3 * d, 2 * d * d


def _project(p: Priced, c, tokens):
    proj_in, proj_out = projections(c["emb_dim"])
    p.out["qkv_proj"] = proj_in * tokens
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _project(p, c, tokens)
    conv.price(p, "short_conv", c["emb_dim"], c["short_conv_kernel"], c, seqs, decode, tokens)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _project(p, c, tokens)
    conv.price_hardware(p, "short_conv", c["short_conv_impl"], c["emb_dim"], c["short_conv_kernel"], c, seqs, decode,
                        tokens)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's kernel streamed, and per sequence its last K - 1 inputs (D channels) read and written."""
    D, K = c["emb_dim"], c["short_conv_kernel"]
    return {"weights": D * K * c["weight_bytes"], "state": 2 * (K - 1) * D * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (SHORT_CONV, 0, False, 0) if letter == "V" else None


def check(c, letters: str, err) -> None:
    if "V" in letters and c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with short-conv ('V') layers")


SCHEMA = {
    "short_conv_kernel": field_of(3, int, "The gated short conv's width (LFM2's conv_L_cache): taps of its causal "
                                          "depthwise conv over the hidden channels.", minimum=1),
    "short_conv_impl": field_of("valid", str, "Hardware short conv ('V' layers): " + conv.IMPL_DOC,
                                choices=conv.IMPLS),
}


FAMILY = Family(
    name="shortconv",
    letters={"V": "gated short convolution (LFM2): in_proj to B, C, x; a causal depthwise conv over B x; C times it"},
    mixers={SHORT_CONV: "gated short conv"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    projection=SHORT_CONV,
    check=check,
    conventions=("exact",),
    hf_layer_types={"conv": "V"},
)
