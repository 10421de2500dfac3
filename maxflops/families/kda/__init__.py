"""Kimi delta attention (Kimi-Linear's linear attention), letter 'K', mixer and projection "kda": a gated delta rule
whose decay is per channel (a diagonal gate over the key width) instead of one scalar per head.

Per token, with H heads of width d (keys and values alike), r the gates' rank, K the conv width:
- q, k, v: D -> H d each (2 D 3 H d);
- the forget gate, low rank: D -> r -> H d (2 D r + 2 r H d), or one D -> H d matmul (``kda_full_rank_forget_gate``:
  Ling's f_proj); beta: D -> H (2 D H);
- the output gate, low rank like the forget gate, or one D -> H d matmul in a model that has it so
  (``kda_full_rank_gate``: Kimi K3's use_full_rank_gate; ``kda_output_gate='full'``, a convention, prices every
  layer's so);
- the causal depthwise conv over q, k and v (3 H d channels; ``maxflops.families.conv``);
- the recurrence per head: S <- diag(exp g) S (elementwise); S <- S + k (x) beta (v - S^T k) (the read S^T k is a
  contraction, the rank-one update is not); o = S^T q: two reads of the d x d state, 2 d^2 FLOPs each
  (``kda_core_state_ops`` = 2);
- the gated norm (elementwise) and o_proj H d -> D.
Hardware: the recurrence as above (``kda_impl='recurrent'``), or the chunked form of transformers' torch path
(``'chunked'``, chunks of ``kda_chunk_size``, every sequence padded to whole chunks: ``kda_chunk``); the conv by
``kda_conv_impl``. Decode: the recurrence for the new token; the state (H d^2) and the conv's last K - 1 inputs read
and written.

Conventions: Megatron-Bridge prices the output gate as full rank and the core at 4 state-sized ops
('megatron_bridge' sets both); the other peers have no rule for these layers, so their conventions refuse them.
"""

from __future__ import annotations

from ... import terms
from ...components import WEIGHT, Component
from ...fields import field_of
from .. import conv
from ..base import Family, Priced

KDA = "kda"
LETTER = "K"
# conventions that define a KDA layer (the others are refused by name: their projects have no rule for one)
CONVENTIONS = ("exact", "megatron_bridge")

COMPONENTS = (Component("kda_conv", WEIGHT, 92, "Kimi delta attention's causal depthwise conv over q, k and v"),)


def kda_proj(d: int, heads: int, head_dim: int, rank: int, full_output_gate: bool = False,
             full_forget_gate: bool = False) -> tuple[int, int]:
    """Kimi delta attention projections per token: (input, output). input: q, k, v D -> heads x head_dim each; the
    forget gate D -> rank -> heads x head_dim (one D -> heads x head_dim matmul with ``full_forget_gate``); beta
    D -> heads; the output gate low rank (or one D -> heads x head_dim matmul with ``full_output_gate``). output:
    heads x head_dim -> D."""
    hd = heads * head_dim
    low_rank = 2 * d * rank + 2 * rank * hd
    gate = 2 * d * hd if full_output_gate else low_rank
    forget = 2 * d * hd if full_forget_gate else low_rank
    return 2 * d * 3 * hd + forget + 2 * d * heads + gate, 2 * hd * d


def kda_chunk(heads: int, head_dim: int, chunk: int) -> int:
    """Kimi delta attention's chunked form as transformers' torch path runs it, one chunk of C tokens, all heads: per
    head the matmuls of the UT transform's products with the beta-scaled values and the decayed keys (2 C^2 d each),
    the reads of the state by the decayed queries and by the transformed keys and the state update K^T V_new
    (2 C d^2 each), and the masked query-key scores times the new values (2 C^2 d). The key-key and query-key scores
    themselves carry the per-channel decay inside the sum, so they are elementwise products and sums, not matmuls;
    the forward substitution that inverts the UT system is elementwise too."""
    c, d = chunk, head_dim
    return heads * (3 * 2 * c * c * d + 3 * 2 * c * d * d)


def widths(c):
    """(D, heads, head width, gates' rank, conv kernel)."""
    d = c["kda_head_dim"]
    return c["emb_dim"], c["kda_num_heads"], d, c["kda_gate_rank"] or d, c["kda_conv_kernel"]


def _project(p: Priced, c, tokens, full_gate: bool) -> None:
    D, H, d, r, _ = widths(c)
    proj_in, proj_out = kda_proj(D, H, d, r, full_gate, c["kda_full_rank_forget_gate"])
    p.out["qkv_proj"] = proj_in * tokens
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, d, _, K = widths(c)
    _project(p, c, tokens, c["kda_full_rank_gate"] or c["kda_output_gate"] == "full")
    conv.price(p, "kda_conv", 3 * H * d, K, c, seqs, decode, tokens)
    p.out["core_attention"] = terms.gdn_core(H, d, d, c["kda_core_state_ops"]) * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state's gradients of S^T k, S^T q: outer products


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, d, _, K = widths(c)
    _project(p, c, tokens, c["kda_full_rank_gate"])
    conv.price_hardware(p, "kda_conv", c["kda_conv_impl"], 3 * H * d, K, c, seqs, decode, tokens)
    if c["kda_impl"] == "chunked" and not decode:
        C = c["kda_chunk_size"]
        p.out["core_attention"] = kda_chunk(H, d, C) * seqs.sum(lambda L: -(-L // C))
    else:
        p.out["core_attention"] = p.single["core_attention"] = terms.gdn_core(H, d, d) * tokens
    # no remat policy name covers these projections or the core ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's weights streamed (they are no matmul), and per sequence the state (H x d x d) with the conv's last
    K - 1 inputs, read and written."""
    _, H, d, _, K = widths(c)
    return {"weights": 3 * H * d * K * c["weight_bytes"],
            "state": 2 * (H * d * d + (K - 1) * 3 * H * d) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (KDA, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with Kimi delta attention ('K') layers")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "kda_num_heads": field_of(32, int, "Kimi delta attention heads (each with a d x d state).", minimum=1),
    "kda_head_dim": field_of(128, int, "Kimi delta attention head width d (queries, keys and values).", minimum=1),
    "kda_gate_rank": field_of(0, int, "Rank of Kimi delta attention's forget and output gates (D -> rank -> heads x d); "
                                "0: kda_head_dim (Kimi-Linear).", minimum=0),
    "kda_conv_kernel": field_of(4, int, "Kimi delta attention's causal depthwise conv width over q, k and v.", minimum=1),
    "kda_impl": field_of("recurrent", str, "Hardware Kimi delta attention: 'recurrent' (two state reads per token and "
                                     "head) or 'chunked' (transformers' torch chunk_kimi_delta_attention: chunks of "
                                     "kda_chunk_size, every sequence padded to whole chunks; its per-channel-decayed "
                                     "key-key and query-key products are elementwise, not matmuls: see "
                                     "maxflops.families.kda.kda_chunk).", choices=("recurrent", "chunked")),
    "kda_chunk_size": field_of(64, int, "Chunk length of kda_impl='chunked'.", minimum=1),
    "kda_conv_impl": field_of("valid", str, "Hardware Kimi delta attention causal conv: " + conv.IMPL_DOC,
                        choices=conv.IMPLS),
    "kda_full_rank_gate": field_of(False, bool, "Kimi delta attention's output gate is one D -> heads x d matmul "
                                                "(Kimi K3's use_full_rank_gate), not low rank as the forget gate."),
    "kda_full_rank_forget_gate": field_of(False, bool, "Kimi delta attention's forget gate is one D -> heads x d matmul "
                                                       "(Ling's BailingHybridForgetGate f_proj), not low rank."),
    "kda_output_gate": field_of("low_rank", str, "Model FLOPs of the output gate: 'low_rank' (exact: D -> rank -> heads x "
                                           "d, as the model has it) or 'full' (Megatron-Bridge: one D -> heads x d "
                                           "matmul).", choices=("low_rank", "full")),
    "kda_core_state_ops": field_of(2, int, "Kimi delta attention core: state-sized ops counted per token and head, "
                                     "2 d^2 FLOPs each. Exact 2 (the reads S^T k and S^T q); Megatron-Bridge "
                                     "counts 4.", minimum=1),
}


FAMILY = Family(
    name="kda",
    letters={LETTER: "Kimi delta attention (linear attention, per-channel decay)"},
    mixers={KDA: "Kimi delta attention"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=KDA,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    conventions=CONVENTIONS,
)
