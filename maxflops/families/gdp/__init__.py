"""The gated delta product (DeltaProduct, Siems et al. 2025; Megatron-LM's GatedDeltaProductMixer), letter 'P', mixer
and projection "gdp": a gated delta net that takes M = ``gdp_num_householder`` delta-rule steps per token, so that
its state transition is a product of M generalized Householder reflections.

Per token, with H heads of value width P (d_in = H P), G key groups of width N (the state is N x P per head), M
Householder steps, K the conv width:
- in_proj D -> the output gate z (d_in), M values (d_in each), M keys and one query (G N each), M betas and one
  decay (H each): ``gdp_proj``;
- the causal depthwise conv over the values, keys and query (M d_in + (M + 1) G N channels; ``families.conv``);
- the recurrence per head: S <- exp(g) S (elementwise), then for j = 1..M the delta-rule step
  S <- S + k_j (x) beta_j (v_j - S^T k_j) (the read S^T k_j is a contraction, the rank-one update is not), then
  o = S^T q: M + 1 reads of the N x P state, 2 N P FLOPs each (``gdp_core``);
- the gated norm (elementwise) and out_proj d_in -> D.
Hardware: the recurrence as above (``gdp_impl='recurrent'``) or the chunked kernel of FLA and Megatron-LM
(``'chunked'``: the keys and values on the Householder-expanded stream in chunks of their own, the queries on the
token stream; ``gdp_chunked``): its forward as FLA runs it, its training step as XLA differentiates the
reference kernel (the triangular solve's gradient holds one C x C by C x C matmul per expanded chunk and head; FLA's
own backward kernels are not priced); the conv by ``gdp_conv_impl``. Decode: the recurrence for the new token; the state (H N P) and the
conv's last K - 1 inputs read and written.

Conventions: Megatron-LM main prices the core at (4 M + 3) N P per head and token (``gdp_core_flops='megatron'``)
and the conv at every tap; no other peer has a rule for these layers, so their conventions refuse them.
"""

from __future__ import annotations

from ... import terms
from ...components import WEIGHT, Component
from ...fields import field_of
from .. import conv
from ..base import Family, Priced

GDP = "gdp"
LETTER = "P"
# conventions that define a gated-delta-product layer (the others are refused by name: no rule for one)
CONVENTIONS = ("exact", "megatron_main")

COMPONENTS = (Component("gdp_conv", WEIGHT, 93, "the gated delta product's causal depthwise conv over values, keys "
                                                "and query"),)


def gdp_proj(d: int, heads: int, head_dim: int, state: int, groups: int, householder: int) -> tuple[int, int]:
    """Gated delta product projections per token: (input, output). input: D -> the output gate z (d_in = heads x
    head_dim), M values (d_in each), M keys and one query (groups x state each), M betas and one decay (heads each),
    M = ``householder``. output: d_in -> D."""
    d_in, m = heads * head_dim, householder
    return 2 * d * (d_in * (1 + m) + groups * state * (1 + m) + heads * (1 + m)), 2 * d_in * d


def gdp_conv_channels(heads: int, head_dim: int, state: int, groups: int, householder: int) -> int:
    """Channels of the gated delta product's causal depthwise conv: the M values, the M keys and the query."""
    return householder * heads * head_dim + (householder + 1) * groups * state


def gdp_core(heads: int, head_dim: int, state: int, householder: int) -> int:
    """The gated delta product's recurrence per token, all heads, state S [state x head_dim] per head: the decay once,
    then M delta-rule steps S <- S + k_j (x) beta_j (v_j - S^T k_j), then o = S^T q. The matmuls are the M key reads and
    the one query read (2 state head_dim each); the decay and the rank-one updates are elementwise: the gated delta
    net's core with M + 1 state-sized ops."""
    return terms.gdn_core(heads, state, head_dim, householder + 1)


def gdp_chunked(heads: int, head_dim: int, state: int, householder: int, chunk: int, length: int) -> int:
    """The chunked gated delta product over one sequence of ``length`` tokens, all heads, as FLA's
    chunk_gated_delta_product and Megatron-LM's kernels run it. The keys, values and betas live on the Householder-
    expanded stream (M x length positions), cut into its own ceil(M L / C) chunks of C: per expanded chunk and head
    the key-key scores K K^T and the WY factors W = T (beta K) and U = T (beta V) (2 C^2 state, 2 C^2 state, 2 C^2
    head_dim), the state read W S and the state update K^T V_new (2 C state head_dim each); the inverse T is a
    triangular solve, not a matmul. The queries live on the token stream, in ceil(L / C) chunks: per token chunk and
    head the read of the chunk's incoming state Q S (2 C state head_dim) and for each of the M copies the masked
    scores Q K^T and their product with the new values (2 C^2 state + 2 C^2 head_dim)."""
    c, p, n, m = chunk, head_dim, state, householder
    expanded, token = -(-m * length // c), -(-length // c)
    return heads * (expanded * (4 * c * c * n + 2 * c * c * p + 4 * c * n * p)
                    + token * (2 * c * n * p + m * (2 * c * c * n + 2 * c * c * p)))


def widths(c):
    """(D, heads, value head width P, key/state width N, key groups, Householder steps M, conv kernel)."""
    return (c["emb_dim"], c["gdp_num_heads"], c["gdp_head_dim"], c["gdp_state_dim"], c["gdp_num_groups"],
            c["gdp_num_householder"], c["gdp_conv_kernel"])


def _project(p: Priced, c, tokens) -> int:
    D, H, P, N, G, M, _ = widths(c)
    proj_in, proj_out = gdp_proj(D, H, P, N, G, M)
    p.out["qkv_proj"] = proj_in * tokens
    p.out["out_proj"] = p.closing["out_proj"] = proj_out * tokens
    return gdp_conv_channels(H, P, N, G, M)


def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, P, N, _, M, K = widths(c)
    channels = _project(p, c, tokens)
    conv.price(p, "gdp_conv", channels, K, c, seqs, decode, tokens)
    if c["gdp_core_flops"] == "megatron":  # Megatron-LM: (4 M + 3) per state element, token and head
        p.out["core_attention"] = (4 * M + 3) * H * N * P * tokens
    else:
        p.out["core_attention"] = gdp_core(H, P, N, M) * tokens
    p.single["core_attention"] = p.out["core_attention"]  # the state's gradients of its reads: outer products


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    _, H, P, N, _, M, K = widths(c)
    channels = _project(p, c, tokens)
    conv.price_hardware(p, "gdp_conv", c["gdp_conv_impl"], channels, K, c, seqs, decode, tokens)
    if c["gdp_impl"] == "chunked" and not decode:
        C = c["gdp_chunk_size"]
        p.out["core_attention"] = seqs.sum(lambda L: gdp_chunked(H, P, N, M, C, L))
        if c["mode"] == "train":  # the triangular solve's gradient: one C x C by C x C matmul per expanded chunk
            p.grad_extra["core_attention"] = H * 2 * C ** 3 * seqs.sum(lambda L: -(-M * L // C))
    else:
        p.out["core_attention"] = p.single["core_attention"] = gdp_core(H, P, N, M) * tokens
    # no remat policy name covers these projections or the core ('context' is attention's)
    p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def decode_cache(kind, c, seqs) -> dict:
    """The conv's weights streamed (they are no matmul), and per sequence the state (H x N x P) with the conv's last
    K - 1 inputs, read and written."""
    _, H, P, N, G, M, K = widths(c)
    channels = gdp_conv_channels(H, P, N, G, M)
    return {"weights": channels * K * c["weight_bytes"],
            "state": 2 * (H * N * P + (K - 1) * channels) * c["state_bytes"] * seqs.count}


def mixer_of(letter: str, layer_number: int, c):
    return (GDP, 0, False, 0) if letter == LETTER else None


def check(c, letters: str, err) -> None:
    if LETTER not in letters:
        return
    if c["gdp_num_heads"] % c["gdp_num_groups"]:
        err("gdp_num_groups", f"{c['gdp_num_groups']} does not divide gdp_num_heads={c['gdp_num_heads']}")
    if c["attention_output_dim"]:
        err("attention_output_dim", "is not supported with gated-delta-product ('P') layers")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "gdp_num_heads": field_of(64, int, "Gated delta product heads H (Megatron-LM: mamba_num_heads); d_in = heads x "
                                 "gdp_head_dim.", minimum=1),
    "gdp_head_dim": field_of(64, int, "Gated delta product value head width P (Megatron-LM: mamba_head_dim).", minimum=1),
    "gdp_state_dim": field_of(128, int, "Gated delta product key width N, the state's rows (Megatron-LM: mamba_state_dim).",
                        minimum=1),
    "gdp_num_groups": field_of(8, int, "Gated delta product key/query groups (divides the heads; Megatron-LM: "
                                 "mamba_num_groups).", minimum=1),
    "gdp_num_householder": field_of(3, int, "Delta-rule (Householder) steps per token M (Megatron-LM: "
                                      "gdp_num_householder, default 3). 1 is a gated delta net.", minimum=1),
    "gdp_conv_kernel": field_of(4, int, "Gated delta product causal depthwise conv width over values, keys and query "
                                  "(Megatron-LM's layer: 4).", minimum=1),
    "gdp_impl": field_of("recurrent", str, "Hardware gated delta product: 'recurrent' (M + 1 state reads per token and "
                                     "head) or 'chunked' (FLA's and Megatron-LM's chunk_gated_delta_product: the "
                                     "expanded keys and values in ceil(M L / gdp_chunk_size) chunks, the queries in "
                                     "ceil(L / gdp_chunk_size); see maxflops.families.gdp.gdp_chunked).",
                   choices=("recurrent", "chunked")),
    "gdp_chunk_size": field_of(64, int, "Chunk length of gdp_impl='chunked' (FLA and Megatron-LM: 64).", minimum=1),
    "gdp_conv_impl": field_of("valid", str, "Hardware gated-delta-product causal conv: " + conv.IMPL_DOC,
                        choices=conv.IMPLS),
    "gdp_core_flops": field_of("exact", str, "Model FLOPs of the gated delta product's recurrence per token and head: "
                                       "'exact' 2 (M + 1) N P (the M key reads and the query read) or 'megatron' "
                                       "(Megatron-LM main: (4 M + 3) N P).", choices=("exact", "megatron")),
}


FAMILY = Family(
    name="gdp",
    letters={LETTER: "gated delta product (linear attention, M Householder steps per token)"},
    mixers={GDP: "gated delta product"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    projection=GDP,
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    check=check,
    conventions=CONVENTIONS,
)
