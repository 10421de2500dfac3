"""Forward FLOPs of each component: small pure functions over Python ints.

A matmul [M, K] x [K, N] costs 2*M*N*K. Only matmuls count: norms, softmax, activations, RoPE, the router's
top-k, sorting, gathers, elementwise gates and the embedding lookup cost 0 here.

Per-token terms return the FLOPs of one token's matmuls against learned weights (multiply by tokens).
Per-pair terms return the FLOPs of one attended (query, key) pair summed over heads (multiply by pairs).

Here are the terms two or more callers share: attention's output projection and per-pair core (the attention, DSA,
compressed, cross and patch families), the gated delta rule's state reads (gdn, kda, gdp), the FFN, MoE and
vocabulary terms, and the trunk's features (per-layer embeddings, Engram, mHC, AltUp, MTP, the ViT encoder). A term
that serves one mixer family lives in that family's package (``maxflops.families.<name>``).
"""

from __future__ import annotations

import math
from fractions import Fraction


def attention_out(n_q: int, v_head_dim: int, d: int) -> int:
    """Output projection H*dv -> D."""
    return 2 * n_q * v_head_dim * d


def attention_per_pair(n_q: int, d_qk: int, d_v: int) -> int:
    """QK^T (2*d_qk) plus PV (2*d_v) per head for one attended pair."""
    return 2 * n_q * (d_qk + d_v)


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


def gdn_core(n_v: int, dk: int, dv: int, state_ops: int = 2) -> int:
    """Gated delta rule, recurrent form, per token over the n_v value heads with state S [dk, dv]:
    S <- a*S;  S <- S + k (x) beta*(v - S^T k);  o = S^T q.
    The matmuls are the two state reads S^T k and S^T q (2*dk*dv each). The rank-one update k (x) delta has
    no contraction (an outer product: one multiply-add per state element, like the decay a*S, which XLA
    also emits as elementwise ops), so it counts 0 here. MaxText and Megatron count 4 state-sized ops."""
    return 2 * state_ops * n_v * dk * dv


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
