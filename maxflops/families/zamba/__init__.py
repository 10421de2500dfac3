"""Zamba's shared transformer block, letter 'Z', mixer and projection "zamba": the block a Zamba hybrid layer runs
before its Mamba mixer, one set of weights reused at several depths. Zamba2 has num_mem_blocks of them in turn, each
with a low-rank adapter of its own at each depth, and a Mamba-2 mixer after it; Zamba (1) has one block, no adapters
(rank 0) and a Mamba-1 mixer after it.

Per token, with D the hidden width, H heads and Hkv KV heads of width hd (``zamba_head_dim``; 0: 2 D / H), I the
MLP width, r the adapters' rank:
- attention over the concatenation of the layer's input and the original embedding (2 D wide): q 2D -> H hd, k and
  v 2D -> Hkv hd, with ``zamba_attention_adapters`` a 2D -> r -> H hd adapter added to each of q, k and v; causal
  pairs, 2 H (hd + hd) per pair; o_proj H hd -> D;
- the MLP on D: gate and up D -> 2 I plus the D -> r -> 2 I adapter, down I -> D (gated);
- the hybrid layer's own linear D -> D, whose output joins the Mamba mixer's input (the next layer of the plan:
  a Zamba2 hybrid layer is 'Z' then 'M', a Zamba one 'Z' then 'A', each without an FFN of its own).
Hardware: the pairs as ``attention_impl`` computes them (maxflops.families.attention). Decode: the KV cache.
"""

from __future__ import annotations

from ... import masks
from ...components import WEIGHT, Component
from ...fields import field_of
from ..attention import GLOBAL, core, impl_pairs, pairs
from ..base import Family, Priced

ZAMBA = "zamba"
LETTER = "Z"

COMPONENTS = (Component("block_linear", WEIGHT, 93, "a Zamba hybrid layer's linear D -> D after its shared block"),)


def head_dim(D: int, H: int, given: int) -> int:
    """The block's head width: ``zamba_head_dim``, or 2 D / H when it is 0 (the width the configs derive)."""
    return given or 2 * D // H


def widths(c):
    """(D, heads, KV heads, head width, MLP width, adapter rank)."""
    D = c["emb_dim"]
    H = c["num_query_heads"]
    return D, H, c["num_kv_heads"], head_dim(D, H, c["zamba_head_dim"]), c["zamba_mlp_dim"], c["zamba_adapter_rank"]


def _project(p: Priced, c, tokens) -> tuple:
    D, H, Hkv, hd, I, r = widths(c)
    qkv = 2 * (2 * D) * (H * hd + 2 * Hkv * hd)
    if c["zamba_attention_adapters"]:
        qkv += 3 * (2 * (2 * D) * r + 2 * r * H * hd)
    p.out["qkv_proj"] = qkv * tokens
    p.out["out_proj"] = 2 * H * hd * D * tokens
    p.out["mlp"] = (2 * D * 2 * I + 2 * D * r + 2 * r * 2 * I + 2 * I * D) * tokens
    p.out["block_linear"] = p.closing["block_linear"] = 2 * D * D * tokens
    return H, hd


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    H, hd = _project(p, c, tokens)
    core(p, H, hd, hd, pairs(GLOBAL, 0, seqs, c, decode))


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    H, hd = _project(p, c, tokens)
    core(p, H, hd, hd, impl_pairs(GLOBAL, 0, seqs, c, decode))


def decode_cache(kind, c, seqs) -> dict:
    """The KV cache (2 Hkv hd per entry), read for every attended entry and written for the new token."""
    _, _, Hkv, hd, _, _ = widths(c)
    kb = c["kv_cache_bytes"]
    return {"kv_read": seqs.sum(lambda kv: masks.new_token_keys(GLOBAL, 0, kv)) * 2 * Hkv * hd * kb,
            "kv_write": seqs.count * 2 * Hkv * hd * kb}


def shared(kind, c) -> tuple:
    """The block's own weights, which its hybrid layers share (the adapters and the layer's linear are each
    layer's): ({component: elements of one row}, the blocks that take turns)."""
    D, H, Hkv, hd, I, _ = widths(c)
    return {"qkv_proj": 2 * D * (H * hd + 2 * Hkv * hd), "out_proj": H * hd * D, "mlp": 3 * D * I}, \
        c["zamba_shared_blocks"]


def mixer_of(letter: str, layer_number: int, c):
    return (ZAMBA, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if not c["zamba_head_dim"] and (2 * c["emb_dim"]) % c["num_query_heads"]:
        err("num_query_heads", f"{c['num_query_heads']} does not divide the shared block's attention width "
                               f"2 x emb_dim = {2 * c['emb_dim']} (or give zamba_head_dim)")
    if c["zamba_attention_adapters"] and c["num_kv_heads"] != c["num_query_heads"]:
        err("zamba_attention_adapters", f"adapters add 2 x emb_dim to keys and values: num_kv_heads="
                                        f"{c['num_kv_heads']} must equal num_query_heads={c['num_query_heads']}")
    if not c["causal"]:
        err("causal", "Zamba's shared block ('Z') attends causally")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "zamba_mlp_dim": field_of(0, int, "Zamba's shared block: its gated MLP width (intermediate_size).", minimum=0),
    "zamba_head_dim": field_of(0, int, "Zamba's shared block: its head width (attention_head_dim); 0: 2 x emb_dim / "
                                       "num_query_heads.", minimum=0),
    "zamba_adapter_rank": field_of(0, int, "Zamba2's shared block: the rank of its per-depth adapters (the MLP's always, "
                                     "q/k/v's with zamba_attention_adapters); 0: none.", minimum=0),
    "zamba_attention_adapters": field_of(False, bool, "Zamba2's shared block: per-depth adapters on q, k and v "
                                                "(use_shared_attention_adapter)."),
    "zamba_shared_blocks": field_of(1, int, "Zamba's shared blocks, which the hybrid layers run in turn (Zamba2's "
                                            "num_mem_blocks; Zamba's one): each one's weights count once in the "
                                            "parameters; no FLOPs effect.", minimum=1),
}


FAMILY = Family(
    name="zamba",
    letters={LETTER: "Zamba's shared transformer block (attention on [hidden, embedding], MLP, linear)"},
    mixers={ZAMBA: "Zamba shared block"},
    components=COMPONENTS,
    weight_components=("block_linear",),
    shared=shared,
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=ZAMBA,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    conventions=("exact",),
)
