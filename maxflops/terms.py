"""Forward FLOPs of each component: small pure functions over Python ints.

A matmul [M, K] x [K, N] costs 2*M*N*K. Only matmuls count: norms, softmax, activations, RoPE, the router's
top-k, sorting, gathers, elementwise gates and the embedding lookup cost 0 here.

Per-token terms return the FLOPs of one token's matmuls against learned weights (multiply by tokens).
Per-pair terms return the FLOPs of one attended (query, key) pair summed over heads (multiply by pairs).
"""

from __future__ import annotations

import math
from fractions import Fraction


def gqa_qkv(d: int, n_q: int, n_kv: int, head_dim: int, output_gate: bool = False, shared_kv: bool = False,
            v_head_dim: int = 0) -> int:
    """q: D -> H*hd (x2 with a per-head output gate, Qwen3-Next); k: D -> Hkv*hd and v: D -> Hkv*dv (``v_head_dim``,
    0: hd; MiMo-V2-Flash's values are narrower than its keys), or one projection used as both with ``shared_kv``
    (Gemma 4's global layers). MHA is Hkv = H, MQA is Hkv = 1."""
    q_width = n_q * head_dim * (2 if output_gate else 1)
    v_width = 0 if shared_kv else n_kv * (v_head_dim or head_dim)
    return 2 * d * (q_width + n_kv * head_dim + v_width)


def attention_out(n_q: int, v_head_dim: int, d: int) -> int:
    """Output projection H*dv -> D."""
    return 2 * n_q * v_head_dim * d


def mla_qkv(d: int, n_q: int, q_lora: int, kv_lora: int, nope: int, rope: int, v: int,
            norm_flops: bool = False) -> int:
    """Multi-head latent attention, non-absorbed (the model-FLOPs form).

    q: with q_lora > 0, D -> q_lora then q_lora -> H*(nope+rope); else D -> H*(nope+rope).
    kv: D -> kv_lora + rope (the latent plus the shared RoPE key), then kv_lora -> H*(nope + v).
    ``norm_flops`` adds Megatron's '+1' terms: rank*(h + n*d + 1) in its q and kv terms, i.e. one multiply-add
    per element of each normalized low-rank latent (2*q_lora + 2*kv_lora per token) -- not a matmul; a
    convention only.
    """
    qk = nope + rope
    if q_lora:
        q = 2 * d * q_lora + 2 * q_lora * n_q * qk + (2 * q_lora if norm_flops else 0)
    else:
        q = 2 * d * n_q * qk
    kv = 2 * d * (kv_lora + rope) + 2 * kv_lora * n_q * (nope + v) + (2 * kv_lora if norm_flops else 0)
    return q + kv


def mla_absorbed_qkv(d: int, n_q: int, q_lora: int, kv_lora: int, nope: int, rope: int) -> int:
    """Absorbed MLA (what DSA kernels and decode execute): q as non-absorbed, then q_nope absorbed into the
    latent per head (H*nope -> H*kv_lora); kv only down-projected (D -> kv_lora + rope), never expanded.
    Attention then runs in the latent: d_qk = kv_lora + rope, d_v = kv_lora per pair."""
    qk = nope + rope
    q = 2 * d * q_lora + 2 * q_lora * n_q * qk if q_lora else 2 * d * n_q * qk
    return q + 2 * n_q * nope * kv_lora + 2 * d * (kv_lora + rope)


def mla_absorbed_out(n_q: int, kv_lora: int, v: int, d: int) -> int:
    """Absorbed MLA output: the latent output per head expanded to v (H*kv_lora -> H*v), then H*v -> D."""
    return 2 * n_q * kv_lora * v + 2 * n_q * v * d


def compressed_qkv(d: int, n_q: int, head_dim: int, q_lora: int, n_kv: int) -> int:
    """DeepSeek-V4 attention projections: q D -> q_lora -> H*hd (D -> H*hd without q LoRA), and one projection
    D -> n_kv*hd whose output is both the keys and the values."""
    q = 2 * d * q_lora + 2 * q_lora * n_q * head_dim if q_lora else 2 * d * n_q * head_dim
    return q + 2 * d * n_kv * head_dim


def grouped_low_rank_out(n_q: int, head_dim: int, groups: int, rank: int, d: int) -> int:
    """Grouped low-rank output: the H*hd attention output in G groups of H*hd/G, each projected to ``rank``
    (G * (H*hd/G) * rank = H*hd*rank multiply-adds), then G*rank -> D."""
    return 2 * n_q * head_dim * rank + 2 * groups * rank * d


def compressor(d: int, width: int, overlap: bool) -> int:
    """A compressor's kv and gate projections per token, D -> width each (2*width with overlapping blocks, whose
    two halves feed the block and the next one); the gated pooling inside a block is elementwise."""
    w = 2 * width if overlap else width
    return 2 * (2 * d * w)


def compressed_indexer_proj(d: int, q_lora: int, n_heads: int, head_dim: int) -> int:
    """A compressed layer's indexer per token: q from the q latent (D without q LoRA) to n_heads*head_dim, head
    weights D -> n_heads, and its own overlapping compressor of width head_dim for the block keys."""
    q_in = q_lora if q_lora else d
    return 2 * q_in * n_heads * head_dim + 2 * d * n_heads + compressor(d, head_dim, True)


def attention_per_pair(n_q: int, d_qk: int, d_v: int) -> int:
    """QK^T (2*d_qk) plus PV (2*d_v) per head for one attended pair."""
    return 2 * n_q * (d_qk + d_v)


def indexer_proj(d: int, q_lora: int, n_heads: int, head_dim: int) -> int:
    """DSA indexer projections per token: q from the q latent (or from D without q LoRA) to
    n_heads*head_dim, k D -> head_dim (one shared key head), head weights D -> n_heads."""
    q_in = q_lora if q_lora else d
    return 2 * q_in * n_heads * head_dim + 2 * d * head_dim + 2 * d * n_heads


def indexer_per_pair(n_heads: int, head_dim: int, head_reduction: bool = True) -> int:
    """DSA indexer scoring per scored pair: q.k over every head (2*n*hd) and the weighted head
    reduction sum_h w_h * relu(q_h.k) (2*n; Megatron leaves it out)."""
    return 2 * n_heads * head_dim + (2 * n_heads if head_reduction else 0)


def mlp(d: int, hidden: int, gated: bool) -> int:
    """Gated FFN (SwiGLU/GeGLU): gate and up D -> F, down F -> D: 6*D*F. Plain FFN: 4*D*F."""
    return (6 if gated else 4) * d * hidden


def mlp_down(d: int, hidden: int) -> int:
    """The down projection F -> D alone (part of ``mlp``)."""
    return 2 * hidden * d


def latent_proj(d: int, latent: int) -> int:
    """A latent MoE's two projections per token: D -> latent before the routed experts, latent -> D after."""
    return 2 * 2 * d * latent


def product_keys(num_experts: int) -> tuple[int, int]:
    """A product-key router over E experts (Doge's): (half keys it scores per side, floor(sqrt(E)); experts their pairs
    can name, floor(sqrt(E))^2)."""
    half = math.isqrt(num_experts)
    return half, half * half


def router(d: int, num_experts: int) -> int:
    """MoE router logits D -> E: every expert is scored for every token."""
    return 2 * d * num_experts


def shared_gate(d: int) -> int:
    """Qwen3-Next shared-expert gate D -> 1."""
    return 2 * d


def gdn_proj(d: int, n_k: int, n_v: int, dk: int, dv: int) -> tuple[int, int]:
    """Gated delta net projections per token: (input, output).

    input: q and k D -> n_k*dk each, v and the output gate z D -> n_v*dv each, beta and the decay a D -> n_v each.
    output: n_v*dv -> D.
    """
    return 2 * d * (2 * n_k * dk + 2 * n_v * dv + 2 * n_v), 2 * n_v * dv * d


def gdn_conv_channels(n_k: int, n_v: int, dk: int, dv: int) -> int:
    """Channels of the causal depthwise conv (q, k and v): each costs 2 FLOPs per non-padding tap."""
    return 2 * n_k * dk + n_v * dv


def gdn_core(n_v: int, dk: int, dv: int, state_ops: int = 2) -> int:
    """Gated delta rule, recurrent form, per token over the n_v value heads with state S [dk, dv]:
    S <- a*S;  S <- S + k (x) beta*(v - S^T k);  o = S^T q.
    The matmuls are the two state reads S^T k and S^T q (2*dk*dv each). The rank-one update k (x) delta has
    no contraction (an outer product: one multiply-add per state element, like the decay a*S, which XLA
    also emits as elementwise ops), so it counts 0 here. MaxText and Megatron count 4 state-sized ops."""
    return 2 * state_ops * n_v * dk * dv


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


def mamba2_proj(d: int, heads: int, head_dim: int, state: int, groups: int) -> tuple[int, int]:
    """Mamba-2 projections per token: (input, output). input: D -> z and x (d_in = heads x head_dim each), B and C
    (groups x state each), dt (heads). output: d_in -> D."""
    d_in = heads * head_dim
    return 2 * d * (2 * d_in + 2 * groups * state + heads), 2 * d_in * d


def mamba2_conv_channels(heads: int, head_dim: int, state: int, groups: int) -> int:
    """Channels of Mamba-2's causal depthwise conv: x, B and C."""
    return heads * head_dim + 2 * groups * state


def mamba2_scan(heads: int, head_dim: int, state: int, flops_per_state: int = 2) -> int:
    """The Mamba-2 recurrence per token, all heads: ``flops_per_state`` per state element (2: the read h C; the decay
    and the outer-product update are elementwise)."""
    return flops_per_state * heads * head_dim * state


def ssd_chunked(heads: int, head_dim: int, state: int, chunk: int, chunks: int) -> int:
    """The chunked SSD algorithm over one sequence padded to ``chunks`` chunks of ``chunk`` tokens, all heads (B and
    C repeated from their groups to the heads, as transformers' torch path and mamba_ssm run it): per chunk and head
    C B^T (2 Q^2 N), its masked product with x (2 Q^2 P), the chunk's state B^T x (2 Q N P) and the read of the
    incoming state by C (2 Q N P); between chunks the decay matrix over the chunks plus the initial state, applied
    to every state (2 (chunks + 1)^2 P N per head)."""
    q, p, n = chunk, head_dim, state
    return heads * (chunks * (2 * q * q * n + 2 * q * q * p + 4 * q * n * p) + 2 * (chunks + 1) ** 2 * p * n)


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


def ple_layer(d: int, p: int) -> int:
    """One layer's per-layer-embedding matmuls, one token: gate D -> P and projection P -> D."""
    return 2 * d * p + 2 * p * d


def ple_global(d: int, layers: int, p: int) -> int:
    """The per-layer-embedding projection D -> layers*P, once per token."""
    return 2 * d * layers * p


def engram_proj(e_in: int, streams: int, d: int) -> int:
    """Engram's key projection E_in -> streams*D and value projection E_in -> D, one token."""
    return 2 * e_in * (streams * d + d)


def mhc(streams: int, d: int, outer: bool = False, pre: bool = True, mix: bool = True) -> int:
    """One mHC mixing, one token, G = streams: the projection G*D -> 2G + G^2, the pre contraction over G
    streams (2GD; without ``pre`` when an implementation multiplies and sums instead) and the residual mixing
    G x G over D (2G^2 D); the post outer product (G*D multiplies) only with ``outer``. Without ``mix`` (HY-V4's
    hyper-connections) the streams are kept as they are: no G^2 outputs, no residual mixing."""
    g = streams
    return 2 * g * d * (2 * g + (g * g if mix else 0)) + (2 * g * d if pre else 0) + (2 * g * g * d if mix else 0) \
        + (g * d if outer else 0)


def altup(streams: int, d: int) -> int:
    """One layer's AltUp matmuls, one token, n = streams: the router D -> n twice (before the layer on the active
    stream, after it on the layer's output), the prediction coefficients n -> n^2, the prediction's mix of the n
    streams over D (n x n, 2 n^2 D) and the correction coefficients n -> n. The correction scales each stream's
    innovation by its coefficient: elementwise, no matmul."""
    n = streams
    return 2 * (2 * d * n) + 2 * n * n * n + 2 * n * n * d + 2 * n * n


def altup_proj(streams: int, d: int) -> int:
    """AltUp's stream projections, one token: D -> D from the embedding into each of the n - 1 other streams, and
    D -> D out of each of them before the streams are averaged."""
    return 2 * (streams - 1) * 2 * d * d


def mhc_head(streams: int, d: int, lowrank: int = 0) -> int:
    """The mHC hyper head per token: the projection G*D -> G of the stream weights (gated hyper-connections,
    ``lowrank`` r: G*D -> r -> G*D, a weight per channel). Their weighted sum over the G streams is elementwise (a
    multiply and a sum in MaxText's and transformers' code), like the decay of a gated delta net, so it counts 0."""
    return 4 * streams * d * lowrank if lowrank else 2 * streams * d * streams


def mhc_lowrank(streams: int, d: int, r: int) -> int:
    """One gated hyper-connection around a branch (Qwen4-Exp's), one token, G = streams: the input weights' low-rank
    map G*D -> r -> G*D and the output's stream weights G*D -> G. The per-channel weighted mean of the streams and the
    output spread over them by its weights are elementwise."""
    return 4 * streams * d * r + 2 * streams * streams * d


def vit_layer(tokens: int, hidden: int, mlp_dim: int) -> tuple[int, int]:
    """(weight, attention) FLOPs of one bidirectional ViT layer over ``tokens``: q, k, v, o of h x h and a
    two-matrix MLP; every token attends every token (QK^T and PV, 2*h each per pair)."""
    return 2 * tokens * hidden * (4 * hidden + 2 * mlp_dim), 4 * tokens * tokens * hidden


def gdn_chunk(n_v: int, dk: int, dv: int, chunk: int, solve: bool = False) -> int:
    """The chunked gated delta net, one chunk of C tokens, all value heads: per head the intra-chunk K K^T,
    the WY factors A V and A K, Q K^T (2C^2 dk or dv each: 3 with dk, 2 with dv counting A V and the masked
    scores times the new values), and against the state Q S, W S and the update K^T V (2C dk dv each). The
    triangular solve for A is not a matmul. With ``solve`` (transformers) the new values and decayed keys come from
    triangular solves against the UT system, so A V and A K are not matmuls: 2 with dk, 1 with dv."""
    c = chunk
    if solve:
        return n_v * (2 * 2 * c * c * dk + 1 * 2 * c * c * dv + 3 * 2 * c * dk * dv)
    return n_v * (3 * 2 * c * c * dk + 2 * 2 * c * c * dv + 3 * 2 * c * dk * dv)


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
    return gdn_core(heads, state, head_dim, householder + 1)


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


def logits(d: int, vocab: int, dense: bool = False) -> int:
    """Output head D -> V, and ``dense``: a D -> D projection before it (ModernBERT's prediction head)."""
    return 2 * d * vocab + (2 * d * d if dense else 0)


def mtp_eh(d: int) -> int:
    """MTP eh projection: concat(embedding, hidden) 2D -> D."""
    return 2 * (2 * d) * d


def capacity_slots(tokens: int, k: int, num_experts: int, capacity_factor: float, rule: str = "ceil") -> int:
    """Slots per expert of a capacity-based MoE dispatch group.

    'ceil': ceil(capacity_factor * tokens * k / E), computed exactly (the factor read as a fraction, so
    1.25 x 24 x 2 / 4 is 15, not 15.000000000000002 -> 16). 'maxtext': MaxText's dense_matmul rule,
    int(max(ceil(tokens * k / E) * capacity_factor, capacity_factor)) in floating point as MaxText computes it
    (41 where 'ceil' gives 42 at 64 tokens, k=2, E=4, factor 1.3)."""
    if rule == "maxtext":
        return int(max(math.ceil(tokens * k / num_experts) * capacity_factor, capacity_factor))
    cf = Fraction(capacity_factor).limit_denominator(1 << 20)
    return math.ceil(cf * tokens * k / num_experts)


def moe_dispatch(group: int, num_experts: int, slots: int, d: int) -> int:
    """The one-hot dispatch [S, D] x [S, E, C] -> [E, C, D] of one group of S tokens (the combine back costs the
    same): 2*S*E*C*D."""
    return 2 * group * num_experts * slots * d


def padded_vocab(vocab: int, divisible_by: int, tp: int) -> int:
    """Vocabulary padded up to a multiple of divisible_by * tp (Megatron)."""
    m = divisible_by * tp
    return -(-vocab // m) * m


def head_vocab(c, hardware: bool = False) -> int:
    """The output head's width. Hardware: the vocabulary padded to make_vocab_size_divisible_by x
    tensor_parallel_size (padding columns are computed). Model FLOPs: the real vocabulary, unless the
    convention counts Megatron's padded one (its default divisor 128 when none is set)."""
    V, div, tp = c["vocab_size"], c["make_vocab_size_divisible_by"], c["tensor_parallel_size"]
    if hardware:
        return padded_vocab(V, div, tp)
    if c["padded_vocab_in_model_flops"]:
        return padded_vocab(V, div if div > 1 else 128, tp)
    return V
