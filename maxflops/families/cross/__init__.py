"""Cross-attention to image tokens (Mllama's cross-attention decoder layers), letter 'X', mixer and projection
"cross": the text tokens' queries attend a stated number of image tokens per sequence (``cross_attention_tokens``:
the vision tower's projected outputs, which the text model takes as an input), every text token every image token;
then the layer's FFN, as any layer's.

Per text token, with D the hidden width, H query heads and Hkv KV heads of width hd (``head_dim``), T image tokens:
- q_proj D -> H hd; per image token of a sequence (a packed document is a sequence), k_proj and v_proj D -> Hkv hd
  (both ``qkv_proj``);
- QK^T and PV over the T image tokens, 2 H hd T each (``core_attention``: no mask, every pair);
- o_proj H hd -> D (``out_proj``).
Its tanh gates and q/k norms are elementwise. Training: three times the forward (the image tokens' gradient flows to
the projector that made them). Hardware: the same pairs whatever ``attention_impl`` (the text x image rectangle has
no masked tile). Decode: the new token's q, its T pairs and o_proj; the image's keys and values were cached at
prefill (no projection) and are read each step.

With ``cross_attention_tokens`` = 0 (text alone) the layer is skipped whole, mixer and FFN, as transformers' Mllama
text model skips it: the family's ``idle`` rule.
"""

from __future__ import annotations

from ... import terms
from ...fields import field_of
from ..attention import core
from ..base import Family, Priced

CROSS = "cross"
LETTER = "X"


def widths(c):
    """(D, heads, KV heads, head width, image tokens)."""
    return c["emb_dim"], c["num_query_heads"], c["num_kv_heads"], c["head_dim"], c["cross_attention_tokens"]


def _price(p: Priced, c, seqs, decode, tokens) -> None:
    D, H, Hkv, hd, T = widths(c)
    images = 0 if decode else seqs.count * T  # image tokens projected to keys and values (decode: cached)
    p.out["qkv_proj"] = 2 * D * H * hd * tokens + 2 * D * 2 * Hkv * hd * images
    p.out["out_proj"] = p.closing["out_proj"] = terms.attention_out(H, hd, D) * tokens
    core(p, H, hd, hd, T * tokens)


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, c, seqs, decode, tokens)


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _price(p, c, seqs, decode, tokens)


def decode_cache(kind, c, seqs) -> dict:
    """The image's keys and values (2 Hkv hd per image token), read for every sequence; nothing written."""
    _, _, Hkv, hd, T = widths(c)
    return {"kv_read": seqs.count * T * 2 * Hkv * hd * c["kv_cache_bytes"], "kv_write": 0}


def mixer_of(letter: str, layer_number: int, c):
    return (CROSS, 0, False, 0) if letter == LETTER else None


def idle(c) -> str:
    """Why its layers are skipped whole (mixer and FFN): no image tokens ("": they run)."""
    return "" if c["cross_attention_tokens"] else "cross-attention without image tokens (cross_attention_tokens = 0)"


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if c["attention_type"] != "global":
        err("attention_type", f"{c['attention_type']!r} with cross-attention ('X') layers: they are modelled on GQA "
                              "(Mllama's) only")
    if LETTER in c["mtp_layer_pattern"] + c["parallel_layer_pattern"]:
        err("attention_layer_pattern", "cross-attention ('X') layers run in the decoder only (not in "
                                       "mtp_layer_pattern or parallel_layer_pattern)")


SCHEMA = {
    "cross_attention_tokens": field_of(0, int, "Image tokens each sequence's cross-attention ('X') layers attend "
                                                "(Mllama: the vision tower's outputs, a stated input: tiles x "
                                                "(patches + 1) per image, times the images); 0: text alone, the "
                                                "'X' layers skipped whole (mixer and FFN), as transformers skips "
                                                "them.", minimum=0),
}


FAMILY = Family(
    name="cross",
    letters={LETTER: "cross-attention to cross_attention_tokens image tokens (Mllama), skipped without them"},
    mixers={CROSS: "cross-attention to image tokens"},
    components=(),
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=CROSS,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    idle=idle,
    plan_keys=("cross_attention_tokens",),
    conventions=("exact",),
)
