"""xLSTM's mLSTM (the matrix-memory LSTM of xLSTM-7B), letter 'T', mixer and projection "mlstm": linear attention
with exponential input and sigmoid forget gates; per head a dqk x dv memory C and a dqk normalizer n.

Per token, with D the hidden width, H heads (``mlstm_num_heads``), the q and k width QK and the v width V
(``mlstm_qk_dim``, ``mlstm_v_dim``; 0: D / 2 and D, xLSTM's factors), dqk = QK / H, dv = V / H:
- q, k D -> QK each, v and the output gate D -> V each, the input and forget gates D -> H each (``qkv_proj``);
- the recurrence per head: C <- f C + i k (x) v and n <- f n + i k (a decay and an outer product: elementwise),
  h = (q C) / max(|q . n|, ...): two reads of the state, 2 dqk dv + 2 dqk FLOPs (``core_attention``);
- the per-head norm and the output gate (elementwise), out_proj V -> D.
Hardware (``mlstm_impl``): 'recurrent' (the model's); 'chunked' (chunks of ``mlstm_chunk_size``, each sequence
padded to whole chunks; per chunk of C tokens and head the state update K^T V and the state read Q C (2 C dqk dv
each), the intra-chunk Q K^T and its gated product with V (2 C^2 dqk, 2 C^2 dv), the normalizer read Q n (2 C dqk):
``mlstm_chunk``); 'chunked_then_recurrent' (transformers' inference mode: the whole chunks chunkwise, the
L mod C tokens after them by the step kernel, whose outer product k (x) v runs as a matmul: 4 dqk dv + 2 dqk per
token and head). Decode: one step (with the chunked forms, transformers' step kernel); the state read and written.
"""

from __future__ import annotations

from ...fields import field_of
from ..base import Family, Priced

MLSTM = "mlstm"
LETTER = "T"
IMPLS = ("recurrent", "chunked", "chunked_then_recurrent")


def mlstm_read(dqk: int, dv: int) -> int:
    """The mLSTM recurrence's matmuls, one token and head: the memory read q C (2 dqk dv) and the normalizer read
    q . n (2 dqk). Its updates C <- f C + i k (x) v and n <- f n + i k are elementwise (an outer product)."""
    return 2 * dqk * dv + 2 * dqk


def mlstm_chunk(dqk: int, dv: int, chunk: int) -> int:
    """The chunkwise mLSTM, one chunk of C tokens and one head: the state update K^T V and the state read Q C (2 C
    dqk dv each), the intra-chunk Q K^T (2 C^2 dqk) and its gated product with V (2 C^2 dv), and the normalizer read
    Q n (2 C dqk; the normalizer's update is a sum)."""
    c = chunk
    return 2 * 2 * c * dqk * dv + 2 * c * c * (dqk + dv) + 2 * c * dqk


def widths(c):
    """(D, heads, dqk, dv)."""
    D, H = c["emb_dim"], c["mlstm_num_heads"]
    qk, v = c["mlstm_qk_dim"] or D // 2, c["mlstm_v_dim"] or D
    return D, H, qk // H, v // H


def _project(p: Priced, c, tokens) -> None:
    D, H, dqk, dv = widths(c)
    p.out["qkv_proj"] = 2 * D * (2 * H * dqk + 2 * H * dv + 2 * H) * tokens
    p.out["out_proj"] = p.closing["out_proj"] = 2 * H * dv * D * tokens


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, dqk, dv = widths(c)
    _project(p, c, tokens)
    p.out["core_attention"] = H * mlstm_read(dqk, dv) * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state's gradients of q C and q . n: outer products


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, dqk, dv = widths(c)
    _project(p, c, tokens)
    impl, C = c["mlstm_impl"], c["mlstm_chunk_size"]
    step = mlstm_read(dqk, dv) + 2 * dqk * dv  # transformers' step kernel: the outer product as a matmul
    if impl == "recurrent":
        p.out["core_attention"] = p.single["core_attention"] = H * mlstm_read(dqk, dv) * tokens
    elif decode:
        p.out["core_attention"] = H * step * tokens
    elif impl == "chunked":  # every sequence padded to whole chunks
        p.out["core_attention"] = H * mlstm_chunk(dqk, dv, C) * seqs.sum(lambda L: -(-L // C))
    else:  # the whole chunks chunkwise, the rest token by token
        p.out["core_attention"] = H * (mlstm_chunk(dqk, dv, C) * seqs.sum(lambda L: L // C)
                                       + step * seqs.sum(lambda L: L % C))
    # no remat policy name covers these projections or the core ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """Per sequence and head the memory (dqk x dv), the normalizer (dqk) and the running maximum (1), read and
    written."""
    _, H, dqk, dv = widths(c)
    return {"state": 2 * H * (dqk * dv + dqk + 1) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (MLSTM, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    D, H = c["emb_dim"], c["mlstm_num_heads"]
    for key, width in (("mlstm_qk_dim", c["mlstm_qk_dim"] or D // 2), ("mlstm_v_dim", c["mlstm_v_dim"] or D)):
        if width < H or width % H:
            err(key, f"{width} (0: the default) is not a whole number of widths for mlstm_num_heads={H}")
    if c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with mLSTM ('T') layers")


SCHEMA = {
    "mlstm_num_heads": field_of(4, int, "mLSTM heads (xLSTM's num_heads).", minimum=1),
    "mlstm_qk_dim": field_of(0, int, "mLSTM's q and k width over all heads; 0: emb_dim // 2 (xLSTM's qk_dim_factor "
                                     "0.5).", minimum=0),
    "mlstm_v_dim": field_of(0, int, "mLSTM's v (and output gate) width over all heads; 0: emb_dim.", minimum=0),
    "mlstm_impl": field_of("recurrent", str, "Hardware mLSTM: 'recurrent' (the state read per token and head), "
                                             "'chunked' (chunks of mlstm_chunk_size, each sequence padded to whole "
                                             "chunks: maxflops.families.mlstm.mlstm_chunk) or "
                                             "'chunked_then_recurrent' "
                                             "(transformers' inference mode: whole chunks chunkwise, the rest token "
                                             "by token with the outer product as a matmul).", choices=IMPLS),
    "mlstm_chunk_size": field_of(64, int, "Chunk length of the chunked mLSTM forms (xLSTM's chunk_size).", minimum=1),
}


FAMILY = Family(
    name="mlstm",
    letters={LETTER: "xLSTM's mLSTM (matrix memory, exponential gating)"},
    mixers={MLSTM: "mLSTM"},
    components=(),
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=MLSTM,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    conventions=("exact",),
)
