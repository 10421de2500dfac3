"""RWKV-4's time mix, letter 'W', mixer and projection "rwkv": key, value and receptance projections of the token
mixed with the previous one, the WKV recurrence (per channel, elementwise: no contraction), the receptance's sigmoid
gate and the output projection; and the layer's channel mix, whose key and value are the layer's FFN (squared ReLU,
not gated) and whose receptance gate D -> D this family prices beside the time mix.

Per token, with D the hidden width and A the time mix's width (``rwkv_attention_dim``; 0: D):
- key, value, receptance D -> A each (``qkv_proj``: 2 D 3 A); the token shift (a mix with the previous token) is
  elementwise;
- the WKV recurrence: per channel a decayed numerator and denominator (elementwise: no attention FLOPs);
- output A -> D (``out_proj``);
- with an FFN: the channel mix's receptance D -> D (``rwkv_receptance``), its sigmoid gating the FFN's output.
Hardware: the same. Decode: the same for the new token; per sequence the state (the previous token for both mixes,
2 D, and the WKV's numerator, denominator and running maximum, 3 A) read and written.
"""

from __future__ import annotations

from ...components import WEIGHT, Component
from ...fields import field_of
from ..base import NO_FFN, Family, Priced

RWKV = "rwkv"
LETTER = "W"

COMPONENTS = (Component("rwkv_receptance", WEIGHT, 98, "RWKV's channel-mix receptance D -> D (the gate on the FFN's "
                                                        "output)"),)


def widths(c):
    """(D, time mix width)."""
    return c["emb_dim"], c["rwkv_attention_dim"] or c["emb_dim"]


def _price(p: Priced, kind, c, tokens) -> None:
    D, A = widths(c)
    p.out["qkv_proj"] = 2 * D * 3 * A * tokens
    p.out["out_proj"] = p.closing["out_proj"] = 2 * A * D * tokens
    if kind.ffn != NO_FFN:
        p.out["rwkv_receptance"] = 2 * D * D * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, kind, c, tokens)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, kind, c, tokens)
    p.unnamed.update({k: v for k, v in p.out.items()})  # no remat policy name covers these


def decode_cache(kind, c, seqs) -> dict:
    """Per sequence the state: the previous token of the time mix and of the channel mix (D each), the WKV's
    numerator, denominator and running maximum (A each), read and written."""
    D, A = widths(c)
    return {"state": 2 * (2 * D + 3 * A) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (RWKV, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER in letters and c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with RWKV ('W') layers")


SCHEMA = {
    "rwkv_attention_dim": field_of(0, int, "RWKV's time mix: its key/value/receptance width (attention_hidden_size); "
                                           "0: emb_dim.", minimum=0),
}


FAMILY = Family(
    name="rwkv",
    letters={LETTER: "RWKV-4's time mix (key, value, receptance, an elementwise WKV recurrence, output)"},
    mixers={RWKV: "RWKV time mix"},
    components=COMPONENTS,
    weight_components=("rwkv_receptance",),
    schema=SCHEMA,
    mixer_of=mixer_of,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    projection=RWKV,
    check=check,
    conventions=("exact",),
)
