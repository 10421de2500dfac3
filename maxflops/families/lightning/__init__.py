"""Lightning attention (MiniMax-01 and M1's linear attention), letter 'N', mixer and projection "lightning": linear
attention with a fixed per-head decay; a d x d state per head replaces attention over pairs.

Per token, with H heads of width d (``lightning_num_heads``, ``lightning_head_dim``; 0: the attention's heads and
head width, as MiniMax has them):
- q, k, v: one projection D -> 3 H d (then silu, elementwise); the output gate D -> H d (sigmoid);
- the recurrence per head: S <- lambda S + k (x) v (a decay and an outer product: elementwise), o = q S: one read
  of the state, 2 d^2 FLOPs;
- the norm and the gate (elementwise), out_proj H d -> D.
Hardware: the recurrence (``lightning_impl='recurrent'``), or the blocked form of MiniMax's kernel and transformers'
torch path (``'blocked'``, blocks of ``lightning_block_size``, the last block its own length: per block of b tokens
and head the intra-block Q K^T and its decayed product with V over the whole b x b block (2 b^2 d each), the
inter-block read of the state by the decayed queries and the state update K^T V (2 b d^2 each):
``lightning_blocks``). Decode: the recurrence for the new token; the state read and written.
"""

from __future__ import annotations

from ...fields import field_of
from ..base import Family, Priced

LIGHTNING = "lightning"
LETTER = "N"


def lightning_proj(d: int, heads: int, head_dim: int) -> tuple[int, int]:
    """Lightning attention projections per token: (input, output). input: q, k, v in one D -> 3 heads x head_dim
    projection and the output gate D -> heads x head_dim. output: heads x head_dim -> D."""
    hd = heads * head_dim
    return 2 * d * 4 * hd, 2 * hd * d


def lightning_blocks(heads: int, head_dim: int, block: int, length: int) -> int:
    """Lightning attention's blocked form over one sequence of ``length`` tokens, all heads: blocks of ``block``
    tokens, the last one its own length b; per block and head Q K^T and its decayed product with V over the whole
    b x b square (2 b^2 d each), the decayed queries' read of the state and the state update K^T V (2 b d^2 each)."""
    full, last = divmod(length, block)
    squares = full * block * block + last * last
    return heads * (4 * head_dim * squares + 4 * head_dim * head_dim * length)


def widths(c):
    """(D, heads, head width)."""
    return (c["emb_dim"], c["lightning_num_heads"] or c["num_query_heads"],
            c["lightning_head_dim"] or c["head_dim"])


def _project(p: Priced, c, tokens) -> None:
    D, H, d = widths(c)
    proj_in, proj_out = lightning_proj(D, H, d)
    p.out["qkv_proj"] = proj_in * tokens
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, d = widths(c)
    _project(p, c, tokens)
    p.out["core_attention"] = p.single["core_attention"] = 2 * H * d * d * tokens  # the state's gradient: an outer product


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, d = widths(c)
    _project(p, c, tokens)
    if c["lightning_impl"] == "blocked" and not decode:
        B = c["lightning_block_size"]
        p.out["core_attention"] = seqs.sum(lambda L: lightning_blocks(H, d, B, L))
    else:
        p.out["core_attention"] = p.single["core_attention"] = 2 * H * d * d * tokens
    # no remat policy name covers these projections or the core ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """Per sequence the state (H x d x d), read and written."""
    _, H, d = widths(c)
    return {"state": 2 * H * d * d * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (LIGHTNING, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with lightning attention ('N') layers")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "lightning_num_heads": field_of(0, int, "Lightning attention heads; 0: num_query_heads (MiniMax).", minimum=0),
    "lightning_head_dim": field_of(0, int, "Lightning attention head width; 0: head_dim (MiniMax).", minimum=0),
    "lightning_impl": field_of("recurrent", str, "Hardware lightning attention: 'recurrent' (one state read per token and "
                                           "head) or 'blocked' (MiniMax's kernel and transformers' torch path: "
                                           "blocks of lightning_block_size, the last one its own length; per block "
                                           "the full intra-block square and the inter-block state read and update; "
                                           "see maxflops.families.lightning.lightning_blocks).",
                                           choices=("recurrent", "blocked")),
    "lightning_block_size": field_of(256, int, "Block length of lightning_impl='blocked' (MiniMax's block_size).",
                               minimum=1),
}


FAMILY = Family(
    name="lightning",
    letters={LETTER: "lightning attention (linear attention with a fixed decay)"},
    mixers={LIGHTNING: "lightning attention"},
    components=(),
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=LIGHTNING,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    conventions=("exact",),
)
