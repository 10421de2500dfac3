"""Griffin's recurrent block (RecurrentGemma, Hawk), letter 'R', mixer and projection "rglru": a gated linear
recurrence of one state per channel (the Real-Gated Linear Recurrent Unit) behind a causal depthwise conv, gated by
a second branch.

Per token, with D the hidden width, W the recurrence's width (``rglru_width``; 0: D), H blocks (``rglru_num_heads``),
K the conv width (``rglru_conv_kernel``):
- linear_y and linear_x, D -> W each (``qkv_proj``: 2 D 2 W);
- the causal depthwise conv over x (W channels, K taps; ``rglru_conv``, ``maxflops.families.conv``);
- the RG-LRU's input gate and recurrence gate, each block-diagonal: H blocks of (W / H) x (W / H) (``rglru_gates``:
  2 x 2 W (W / H));
- the recurrence h <- a h + sqrt(1 - a^2) (i x): elementwise, one state per channel (no contraction: no attention
  FLOPs); y times gelu(linear_y x) (elementwise); linear_out W -> D (``out_proj``).
Hardware: the same, the conv by ``rglru_conv_impl`` (transformers' torch path pads it by K - 1 on both sides).
Decode: the same for the new token; the conv's last K - 1 inputs and the state (W each) read and written, the conv's
kernel streamed.
"""

from __future__ import annotations

from ...components import WEIGHT, Component
from ...fields import field_of
from .. import conv
from ..base import Family, Priced

RGLRU = "rglru"
LETTER = "R"

COMPONENTS = (Component("rglru_gates", WEIGHT, 96, "the RG-LRU's block-diagonal input and recurrence gates"),
              Component("rglru_conv", WEIGHT, 97, "the Griffin recurrent block's causal depthwise conv over x"))


def widths(c):
    """(D, recurrence width, blocks, conv kernel)."""
    return c["emb_dim"], c["rglru_width"] or c["emb_dim"], c["rglru_num_heads"], c["rglru_conv_kernel"]


def _project(p: Priced, c, tokens) -> None:
    D, W, H, _ = widths(c)
    p.out["qkv_proj"] = 2 * D * 2 * W * tokens
    p.out["rglru_gates"] = 2 * 2 * W * (W // H) * tokens
    p.out["out_proj"] = p.closing["out_proj"] = 2 * W * D * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, W, _, K = widths(c)
    _project(p, c, tokens)
    conv.price(p, "rglru_conv", W, K, c, seqs, decode, tokens)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, W, _, K = widths(c)
    _project(p, c, tokens)
    conv.price_hardware(p, "rglru_conv", c["rglru_conv_impl"], W, K, c, seqs, decode, tokens)
    # no remat policy name covers these projections ('query_proj'... are attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], rglru_gates=p.out["rglru_gates"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's kernel streamed; per sequence the conv's last K - 1 inputs and the recurrence's state (W each)
    read and written."""
    _, W, _, K = widths(c)
    return {"weights": W * K * c["weight_bytes"], "state": 2 * K * W * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (RGLRU, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    W = c["rglru_width"] or c["emb_dim"]
    if W % c["rglru_num_heads"]:
        err("rglru_num_heads", f"{c['rglru_num_heads']} does not divide the recurrence's width {W} (its gates are "
                               "block-diagonal)")
    if c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with Griffin recurrent ('R') layers")


SCHEMA = {
    "rglru_width": field_of(0, int, "Griffin's recurrent block: the RG-LRU's width (RecurrentGemma's lru_width); 0: "
                                    "emb_dim.", minimum=0),
    "rglru_num_heads": field_of(1, int, "Griffin's recurrent block: the blocks of its block-diagonal gates "
                                        "(RecurrentGemma's num_attention_heads).", minimum=1),
    "rglru_conv_kernel": field_of(4, int, "Griffin's recurrent block: its causal depthwise conv's width "
                                          "(conv1d_width).", minimum=1),
    "rglru_conv_impl": field_of("valid", str, "Hardware conv of Griffin's recurrent block ('R' layers): "
                                + conv.IMPL_DOC, choices=conv.IMPLS),
}


FAMILY = Family(
    name="rglru",
    letters={LETTER: "Griffin's recurrent block (RecurrentGemma): a causal conv and the RG-LRU, gated"},
    mixers={RGLRU: "Griffin recurrent block (RG-LRU)"},
    components=COMPONENTS,
    weight_components=("rglru_gates",),
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    projection=RGLRU,
    check=check,
    conventions=("exact",),
    hf_layer_types={"recurrent": LETTER},
)
