"""Plan + terms + masks -> a Breakdown: each layer kind priced (model and hardware), the mode, gradient
accumulation, conventions. The train multipliers are ``maxflops.training``'s; resolution is ``maxflops.resolve``'s.
"""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction
from typing import Any, Sequence

from . import masks, terms
from .sequences import Packed, Uniform, as_lengths, batch
from .breakdown import Breakdown, make_breakdown
from .config import SCHEMA
from .plan import BIDIRECTIONAL, CHUNK, COMPRESSED, CSA, DSA, GLOBAL, WINDOW, LayerKind
from .resolve import from_source, hardware_view, plan_of, resolve_call
from .training import (REMAT_SAVES, WARMUP_REMAT, hardware_train_flops, head_passes, recomputed, train_factor,
                       warmup)


# --- pricing one layer kind -------------------------------------------------------------------------------

def _pairs(mixer: str, span: int, seqs, c, decode: bool):
    """Attended (query, key) pairs of an attention mixer under the config's conventions."""
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(mixer, span, kv))
    if mixer in (WINDOW, CHUNK) and c["window_pairs"] == "global" or mixer == DSA and c["dsa_pairs"] == "global":
        mixer, span = GLOBAL, 0
    if mixer == GLOBAL and c["window_scope"] == "all_layers":  # the model's chunk, else its window, everywhere
        pattern = c["attention_layer_pattern"][:c["num_decoder_layers"]]
        if "C" in pattern:
            mixer, span = CHUNK, c["chunk_attn_window_size"]
        elif "L" in pattern:
            mixer, span = WINDOW, c["sliding_window_size"]
    if mixer == GLOBAL and c["causal_pairs"] == "half_square":
        return masks.half_square(seqs)
    if mixer == WINDOW and c["window_pairs"] == "megatron":
        return masks.window_megatron(seqs, span)
    if mixer == CHUNK and c["window_pairs"] == "megatron":
        return masks.chunk_megatron(seqs, span)
    if mixer == WINDOW and c["window_pairs"] == "maxtext":
        return masks.band_maxtext(seqs, span)
    if mixer == WINDOW and c["window_pairs"] == "unclamped":
        return masks.window_unclamped(seqs, span)
    if mixer == CHUNK and c["window_pairs"] == "maxtext":
        return masks.chunk_maxtext(seqs, span)
    if mixer == DSA and c["dsa_pairs"] == "maxtext":
        return masks.band_maxtext(seqs, span)
    if mixer == DSA and c["dsa_pairs"] == "megatron":
        return masks.dsa_megatron(seqs, span)
    if mixer == DSA and c["dsa_pairs"] == "megatron_floor":
        return masks.dsa_megatron_floor(seqs, span)
    return seqs.exact_pairs(mixer, span)


def _indexer(kind: LayerKind, seqs, c, decode: bool) -> tuple[Any, Any]:
    """(tokens that run the indexer, scored pairs)."""
    if decode:  # the new token scores every cached key and itself
        return seqs.count, seqs.sum(lambda kv: kv + 1)
    if c["indexer_skip_within_topk"]:  # only sequences longer than K run the indexer
        seqs = seqs.longer_than(kind.span)
        if seqs is None:
            return 0, 0
    if c["indexer_pairs"] == "half_square":
        return seqs.tokens, masks.half_square(seqs)
    return seqs.tokens, seqs.exact_pairs(GLOBAL, 0)


def _hardware_pairs(kind: LayerKind, seqs, c, decode: bool):
    """Pairs the kernels compute: ``attention_impl`` for masked attention, ``dsa_impl`` for DSA."""
    mixer, span = kind.mixer, kind.span
    if mixer == DSA:
        if c["dsa_impl"] == "dense":  # the full square with the top-k mask
            return _dense_pairs(seqs, decode)
        if c["dsa_impl"] == "blocked":  # a dynamic-mask tile kernel: every causally visible tile (an upper bound)
            bq, bkv = c["attention_block_q"], c["attention_block_kv"]
            if decode:
                return seqs.sum_scalar(lambda kv: masks.blocked_decode(GLOBAL, 0, kv, bkv))
            return seqs.sum(lambda L: masks.blocked(GLOBAL, 0, L, bq, bkv))
        if c["dsa_impl"] == "gather_k":  # exactly K keys gathered per query (all visible ones when fewer)
            if decode:
                return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv))
            return seqs.sum(lambda L: masks.gathered(L, span))
        return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv)) if decode else seqs.exact_pairs(DSA, span)
    return _impl_pairs(mixer, span, seqs, c, decode)


def _dense_pairs(seqs, decode: bool):
    """The full square, masked (decode: the new token against the whole cache and itself)."""
    return seqs.sum(lambda kv: kv + 1) if decode else seqs.sum(lambda L: L * L)


def _impl_pairs(mixer, span, seqs, c, decode: bool):
    impl = c["attention_impl"]
    if impl == "dense":
        return _dense_pairs(seqs, decode)
    if impl == "blocked":
        bq, bkv = c["attention_block_q"], c["attention_block_kv"]
        if decode:
            return seqs.sum_scalar(lambda kv: masks.blocked_decode(mixer, span, kv, bkv))
        return seqs.sum(lambda L: masks.blocked(mixer, span, L, bq, bkv))
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(mixer, span, kv))
    return seqs.exact_pairs(mixer, span)


@dataclasses.dataclass
class _Priced:
    """One layer kind's forward, as the pricing functions below fill it (see ``price_forward``)."""

    out: dict = dataclasses.field(default_factory=dict)  # FLOPs by component
    qk: Any = 0  # the QK^T part of core_attention
    tail: dict = dataclasses.field(default_factory=dict)  # parts not recomputed by remat, by component
    single: dict = dataclasses.field(default_factory=dict)  # parts with one backward matmul, by component
    unnamed: dict = dataclasses.field(default_factory=dict)  # parts no remat policy saves, by component
    grad_extra: dict = dataclasses.field(default_factory=dict)  # backward FLOPs beyond two per forward, by component


def price_forward(kind: LayerKind, c, seqs, decode: bool, hardware: bool = False) -> _Priced:
    """One layer kind's forward FLOPs by component (``out``), with what its training prices need: the QK^T part of
    its core attention, the 'tail', 'single' and 'unnamed' parts by component, and hardware's ``grad_extra``.

    The tail is the matmuls whose outputs are only added into the layer's output (the dense FFN's down
    projection; a shared expert's without its gate): a rematerialized layer does not recompute them, because
    its backward pass needs their inputs, not their outputs. (The attention output feeds the FFN's norm, and
    routed experts' outputs are scaled by router weights, so those are recomputed.)

    The single parts are matmuls one of whose operand gradients contracts nothing (an outer product) or is not
    needed: the indexer's weighted sum over its heads, the gated delta net's state reads, the dense MoE path's
    router-weighted sum over experts, the one-hot MoE dispatch (its mask takes no gradient), the shared experts'
    gate D -> 1. Model FLOPs count
    every backward as two matmuls; hardware FLOPs follow ``outer_product_grads``.

    Model FLOPs (``hardware=False``) follow the convention knobs and may hold Fractions. Hardware FLOPs
    (``hardware=True``, ``c`` an exact view of the config) follow the implementation knobs; each place where the
    two differ is a ``_hardware_*`` function.
    """
    p = _Priced()
    tokens = seqs.count if decode else seqs.tokens
    if kind.projection == "gdn":
        _gated_delta_net(p, c, seqs, decode, tokens, hardware)
    else:
        _attention(p, kind, c, seqs, decode, tokens, hardware)
    _ffn(p, kind, c, seqs, decode, tokens, hardware)
    _extras(p, kind, c, seqs, decode, tokens, hardware)
    return p


def ffn_width(c) -> int:
    """The attention output's and the FFN's width (emb_dim unless attention_output_dim says otherwise)."""
    return c["attention_output_dim"] or c["emb_dim"]


def _gated_delta_net(p: _Priced, c, seqs, decode, tokens, hardware) -> None:
    d = c["emb_dim"]
    nk, nv = c["gdn_num_key_heads"], c["gdn_num_value_heads"]
    dk, dv, K = c["gdn_key_head_dim"], c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"]
    proj_in, proj_out = terms.gdn_proj(d, nk, nv, dk, dv)
    p.out["qkv_proj"] = proj_in * tokens
    if hardware and c["gdn_conv_impl"] == "padded" and not decode:  # K taps at each of L + K - 1 outputs
        taps = seqs.sum(lambda L: K * (L + K - 1))
    elif c["gdn_conv_taps"] == "full":
        taps = K * tokens
    elif decode:
        taps = seqs.sum(lambda kv: masks.new_token_keys(WINDOW, K, kv))
    else:
        taps = seqs.exact_pairs(WINDOW, K)  # non-padding taps of a causal conv: a window of K
    channels = terms.gdn_conv_channels(nk, nv, dk, dv)
    p.out["gdn_conv"] = 2 * channels * taps
    if hardware and c["mode"] == "train":
        _hardware_conv_grads(p, c, channels, K * tokens)
    if hardware and c["gdn_impl"] != "recurrent" and not decode:
        p.out["core_attention"] = _hardware_gdn_chunked(c, seqs, nv, dk, dv)
        if c["gdn_impl"] == "chunked":  # the triangular solve's gradient holds one C x C by C x C matmul
            C = c["gdn_chunk_size"]
            p.grad_extra["core_attention"] = nv * 2 * C ** 3 * seqs.sum(lambda L: -(-L // C))
    else:
        p.out["core_attention"] = terms.gdn_core(nv, dk, dv, c["gdn_core_state_ops"]) * tokens
        p.single["core_attention"] = p.out["core_attention"]  # the state's gradient of S^T k, S^T q: outer products
    p.out["out_proj"] = proj_out * tokens
    if hardware:  # no remat policy name covers the gated delta net's projections or core ('context' is attention's)
        p.unnamed.update(qkv_proj=p.out["qkv_proj"], core_attention=p.out["core_attention"], out_proj=p.out["out_proj"])


def _hardware_conv_grads(p: _Priced, c, channels: int, all_taps) -> None:
    """The causal conv's two gradients beyond the forward's cost each: the input gradient over every tap
    (``gdn_conv_impl='pre_padded'``), the weight gradient over every pair of channels (``conv_weight_grad``)."""
    fwd, extra = p.out["gdn_conv"], 0
    if c["gdn_conv_impl"] == "pre_padded":
        extra += 2 * channels * all_taps - fwd
    if c["conv_weight_grad"] == "dense":
        extra += fwd * (channels - 1)
    if extra:
        p.grad_extra["gdn_conv"] = extra


def _hardware_gdn_chunked(c, seqs, nv, dk, dv):
    """The chunked form: every sequence padded to whole chunks of gdn_chunk_size."""
    C = c["gdn_chunk_size"]
    return terms.gdn_chunk(nv, dk, dv, C, c["gdn_impl"] == "chunked_solve") * seqs.sum(lambda L: -(-L // C))


def _attention(p: _Priced, kind: LayerKind, c, seqs, decode, tokens, hardware) -> None:
    d, h, d_out = c["emb_dim"], c["num_query_heads"], ffn_width(c)
    if kind.projection == "mla":
        q_lora, kv_lora, nope, rope, v = (c["q_lora_rank"], c["kv_lora_rank"], c["qk_nope_head_dim"],
                                          c["qk_rope_head_dim"], c["v_head_dim"])
        if hardware and c["mla_absorbed"]:  # attention in the kv latent, with absorb and expand matmuls
            p.out["qkv_proj"] = terms.mla_absorbed_qkv(d, h, q_lora, kv_lora, nope, rope) * tokens
            d_qk, d_v = kv_lora + rope, kv_lora
            p.out["out_proj"] = terms.mla_absorbed_out(h, kv_lora, v, d_out) * tokens
        else:
            p.out["qkv_proj"] = terms.mla_qkv(d, h, q_lora, kv_lora, nope, rope, v, c["mla_norm_flops"]) * tokens
            d_qk, d_v = nope + rope, v
            if hardware:  # the latents (q and kv down projections) carry no saved name in MaxText's MLA
                p.unnamed["qkv_proj"] = 2 * d * (q_lora + kv_lora + rope) * tokens
            p.out["out_proj"] = terms.attention_out(h, d_v, d_out) * tokens
            if kind.mixer == DSA and c["dsa_core_form"] == "absorbed":  # a convention: the latent's widths per pair
                d_qk, d_v = kv_lora + rope, kv_lora
    elif kind.projection == "compressed":
        hd = d_qk = d_v = c["head_dim"]
        n_kv = 0 if kind.kv_shared else c["num_kv_heads"]
        p.out["qkv_proj"] = terms.compressed_qkv(d, h, hd, c["q_lora_rank"], n_kv) * tokens
        if c["o_groups"]:
            p.out["out_proj"] = terms.grouped_low_rank_out(h, hd, c["o_groups"], c["o_lora_rank"], d_out) * tokens
        else:
            p.out["out_proj"] = terms.attention_out(h, hd, d_out) * tokens
    else:
        hd, n_kv, shared_kv = c["head_dim"], c["num_kv_heads"], False
        if kind.mixer in (GLOBAL, BIDIRECTIONAL):  # global layers may have their own widths (Gemma 4)
            hd, n_kv = c["global_head_dim"] or hd, c["global_num_kv_heads"] or n_kv
            shared_kv = c["share_kv_projections"]
        if kind.kv_shared:  # keys and values come from an earlier layer: only q is projected
            n_kv = 0
        gate = c["attention_output_gate"] and c["gate_projections"]
        p.out["qkv_proj"] = terms.gqa_qkv(d, h, n_kv, hd, gate, shared_kv) * tokens
        d_qk = d_v = hd
        norms = c["qkv_norms"]
        if norms == "qk_rope":  # Llama 4: the norm runs with RoPE only; its NoPE (global) layers skip both
            norms = "none" if kind.mixer == GLOBAL else "qk"
        if hardware and (gate or norms != "none"):
            p.unnamed["qkv_proj"] = _renamed_projections(norms, d, h, n_kv, hd, gate, shared_kv) * tokens
        p.out["out_proj"] = terms.attention_out(h, d_v, d_out) * tokens
    if kind.mixer in COMPRESSED:
        pairs = _compressed(p, kind, c, seqs, decode, tokens, hardware)
    elif hardware:
        pairs = _hardware_pairs(kind, seqs, c, decode)
    else:
        pairs = _pairs(kind.mixer, kind.span, seqs, c, decode)
    p.qk = terms.attention_per_pair(h, d_qk, 0) * pairs
    p.out["core_attention"] = p.qk + terms.attention_per_pair(h, 0, d_v) * pairs
    if kind.computes_index and kind.mixer == DSA and (hardware or c["indexer_flops"]):
        if hardware:
            idx_tokens, scored = _hardware_indexer(p, kind, c, seqs, decode, terms.attention_per_pair(h, d_qk, 0))
        else:
            idx_tokens, scored = _indexer(kind, seqs, c, decode)
        n, hd_i = c["index_n_heads"], c["index_head_dim"]
        p.out["indexer_proj"] = terms.indexer_proj(d, c["q_lora_rank"], n, hd_i) * idx_tokens
        _indexer_score(p, c, n, hd_i, scored, hardware)


def _renamed_projections(norms: str, d: int, h: int, n_kv: int, hd: int, gate: bool, shared_kv: bool) -> int:
    """Per token, the q/k/v projections a remat policy that saves q, k and v still recomputes: those normed after
    the projection (the norm's backward needs its input), and a q projection fused with the output gate (the gate
    is not saved)."""
    q = terms.gqa_qkv(d, h, 0, hd, gate) if gate or norms != "none" else 0
    k = 2 * d * n_kv * hd if norms != "none" else 0
    v = 2 * d * n_kv * hd if norms == "qkv" and not shared_kv else 0
    return q + k + v


def _compressed(p: _Priced, kind: LayerKind, c, seqs, decode, tokens, hardware):
    """A compressed layer (CSA or HCA) beside its projections: its compressor, its indexer (CSA), and the keys
    each query attends, returned: the sliding window's plus the compressed blocks'."""
    d, W, m, K = c["emb_dim"], c["sliding_window_size"], kind.ratio, kind.span
    p.out["compressor"] = terms.compressor(d, c["head_dim"], kind.mixer == CSA) * tokens
    if hardware:
        window = _impl_pairs(WINDOW, W, seqs, c, decode)
        blocks = _hardware_blocks(seqs, m, K, c, decode)
    else:
        window = _pairs(WINDOW, W, seqs, c, decode)
        blocks = _compressed_blocks(seqs, m, K, c, decode)
    if kind.computes_index and (hardware or c["indexer_flops"]):
        h, hd = c["num_query_heads"], c["head_dim"]
        skip = c["indexer_skip_short"] if hardware else c["indexer_skip_within_topk"]
        run = seqs.longer_than((K + 1) * m - 1) if skip and not decode else seqs  # more blocks than the top-k
        if run is None:
            idx_tokens = scored = 0
        else:
            idx_tokens = run.count if decode else run.tokens
            scored = (_hardware_blocks(run, m, 0, c, decode) if hardware
                      else _compressed_blocks(run, m, 0, c, decode, indexer=True))
        if hardware and c["mode"] == "train" and c["indexer_loss_scaling_factor"] > 0:
            p.out["indexer_kl"] = terms.attention_per_pair(h, hd, 0) * scored  # the main scores, detached target
        n, hd_i = c["index_n_heads"], c["index_head_dim"]
        name = "indexer_proj_attn" if c["indexer_proj_split"] == "attention" else "indexer_proj"
        p.out[name] = terms.compressed_indexer_proj(d, c["q_lora_rank"], n, hd_i) * idx_tokens
        _indexer_score(p, c, n, hd_i, scored, hardware)
    return window + blocks


def _indexer_score(p: _Priced, c, n: int, hd: int, scored, hardware: bool) -> None:
    """The indexer's scoring over ``scored`` pairs: q.k per head, and the weighted sum over heads where it is counted
    (model FLOPs: indexer_head_reduction; hardware: weighted_sum_impl='einsum'). The head weighting's gradient
    with respect to the scores is an outer product (the 'single' part)."""
    reduction = c["indexer_head_reduction"] and not (hardware and c["weighted_sum_impl"] == "elementwise")
    p.out["indexer_score"] = terms.indexer_per_pair(n, hd, reduction) * scored
    if reduction:
        p.single["indexer_score"] = 2 * n * scored


def _compressed_blocks(seqs, m: int, K: int, c, decode: bool, indexer: bool = False):
    """(query, compressed block) pairs attended (K > 0: at most K per query) or, for the indexer, scored, under
    the config's conventions."""
    if decode:
        return seqs.sum(lambda kv: masks.new_token_blocks(kv, m, K))
    if indexer and c["indexer_pairs"] == "half_square" or not indexer and c["compressed_pairs"] == "maxtext":
        return masks.compressed_topk_maxtext(seqs, m, K) if K else masks.compressed_maxtext(seqs, m)
    return _exact_blocks(seqs, m, K)


def _hardware_blocks(seqs, m: int, K: int, c, decode: bool):
    """(query, compressed block) pairs the kernels compute. Top-k blocks (K > 0) follow ``dsa_impl``: 'dense'
    every formed block, masked; 'gather_k' min(blocks, K) gathered for every query; 'ideal' the top-k. Every
    visible block (K = 0, also the indexer's scoring) follows ``attention_impl``: 'dense' every formed block,
    future ones included; 'blocked' the tiles up to the last visible block; 'ideal' the visible ones."""
    impl = c["dsa_impl"] if K else c["attention_impl"]
    if decode:  # every cached block is visible; dense and blocked read them all (tiles stop at the last one)
        return seqs.sum(lambda kv: masks.new_token_blocks(kv, m, 0 if impl in ("dense", "blocked") else K))
    if impl == "dense":
        return seqs.sum(lambda L: L * masks.compressed_blocks(L, m))
    if impl == "gather_k":
        return seqs.sum(lambda L: L * masks._minimum(masks.compressed_blocks(L, m), K))
    if impl == "blocked":
        return seqs.sum(lambda L: masks.blocked_compressed(L, m, c["attention_block_q"], c["attention_block_kv"]))
    return _exact_blocks(seqs, m, K)


def _exact_blocks(seqs, m: int, K: int):
    """The exact (query, block) pairs: each query's visible blocks, at most K of them when K > 0."""
    if K:
        return seqs.sum(lambda L: masks.compressed_topk(L, m, K))
    return seqs.sum(lambda L: masks.compressed_visible(L, m))


def _hardware_indexer(p: _Priced, kind: LayerKind, c, seqs, decode, kl_per_pair):
    """(tokens that run the indexer, pairs it scores) as a program runs it: the pairs its kernel computes, none
    for a sequence that fits in the top-k when the program skips those; with a KL loss in training, the main
    attention's scores over the same pairs (the loss's detached target) as ``indexer_kl``."""
    run = seqs.longer_than(kind.span) if c["indexer_skip_short"] and not decode else seqs
    idx_tokens = 0 if run is None else (run.count if decode else run.tokens)
    if run is None:
        scored = 0
    elif c["indexer_impl"] == "dense":  # plain einsums over the full square, whatever kernel runs the attention
        scored = _dense_pairs(run, decode)
    else:
        scored = _impl_pairs(GLOBAL, 0, run, c, decode)
    if c["mode"] == "train" and c["indexer_loss_scaling_factor"] > 0:
        p.out["indexer_kl"] = kl_per_pair * scored
    return idx_tokens, scored


def _ffn(p: _Priced, kind: LayerKind, c, seqs, decode, tokens, hardware) -> None:
    d_ffn = ffn_width(c)
    gated = len(c["mlp_activations"]) == 2
    post_norm = c["post_ffn_norm"]  # a norm on the FFN output needs the last matmul's output back: no tail
    if kind.ffn != "moe":
        width = c["mlp_dim"] * (2 if kind.kv_shared and c["double_wide_kv_shared_mlp"] else 1)
        p.out["mlp"] = terms.mlp(d_ffn, width, gated) * tokens
        if not post_norm:
            p.tail["mlp"] = terms.mlp_down(d_ffn, width) * tokens
        return
    if c["router_flops"]:
        p.out["moe_router"] = terms.router(d_ffn, c["num_experts"]) * tokens
    per_expert_token = terms.mlp(d_ffn, c["moe_mlp_dim"], gated)
    if hardware and c["moe_impl"] != "ideal":
        _hardware_moe(p, c, seqs, decode, tokens, per_expert_token, d_ffn)
    else:
        p.out["moe_routed"] = c["num_experts_per_tok"] * per_expert_token * tokens
    if hardware and c["moe_router_scale"] == "input" and not post_norm:  # the experts' outputs are only summed
        p.tail["moe_routed"] = p.out["moe_routed"] * Fraction(terms.mlp_down(d_ffn, c["moe_mlp_dim"]), per_expert_token)
    if c["shared_experts"]:
        gate = terms.shared_gate(d_ffn) if c["shared_expert_gate"] and c["shared_expert_gate_flops"] else 0
        width = c["shared_expert_mlp_dim"] or c["moe_mlp_dim"]
        p.out["moe_shared"] = (c["shared_experts"] * terms.mlp(d_ffn, width, gated) + gate) * tokens
        if gate:  # D -> 1: its input gradient contracts nothing, and no remat policy name covers it
            p.single["moe_shared"] = gate * tokens
            if hardware:
                p.unnamed["moe_shared"] = gate * tokens
        if not gate and not post_norm:
            p.tail["moe_shared"] = c["shared_experts"] * terms.mlp_down(d_ffn, width) * tokens


def _hardware_moe(p: _Priced, c, seqs, decode, tokens, per_expert_token, d_ffn) -> None:
    """The routed experts as moe_impl runs them, with moe_dispatch's one-hot matmuls where the program uses them."""
    E, einsum = c["num_experts"], c["moe_dispatch"] == "einsum"
    if c["moe_impl"] == "ragged_dense":  # every routed row against every expert (XLA-CPU's lax.ragged_dot)
        p.out["moe_routed"] = E * c["num_experts_per_tok"] * per_expert_token * tokens
        return
    if c["moe_impl"] == "dense":  # every expert runs every token; the router's weights sum them (a matmul over E)
        p.out["moe_routed"] = E * per_expert_token * tokens
        if einsum:
            p.out["moe_weighted_sum"] = p.single["moe_weighted_sum"] = 2 * E * d_ffn * tokens
            if not c["post_ffn_norm"]:
                p.tail["moe_weighted_sum"] = p.out["moe_weighted_sum"]
            if c["moe_router_scale"] == "input":  # constant one-hot weights: no gradient for them
                p.grad_extra["moe_weighted_sum"] = -p.out["moe_weighted_sum"]
        return
    # capacity: per dispatch group every expert runs C slots, dispatched and combined one-hot
    group, groups = _dispatch_groups(c, seqs, decode)
    slots = terms.capacity_slots(group, c["num_experts_per_tok"], E, c["capacity_factor"], c["capacity_rule"])
    p.out["moe_routed"] = E * slots * per_expert_token * groups
    if einsum:
        one = terms.moe_dispatch(group, E, slots, d_ffn) * groups
        p.out["moe_dispatch"], p.out["moe_combine"] = one, one
        p.single["moe_dispatch"] = one  # the one-hot mask takes no gradient
        if not c["post_ffn_norm"]:
            p.tail["moe_combine"] = one


def _extras(p: _Priced, kind: LayerKind, c, seqs, decode, tokens, hardware) -> None:
    """What a layer adds around attention and the FFN: the up-projection of a latent FFN, per-layer embeddings,
    Engram, mHC mixing, and an MTP module's own matmuls."""
    d, d_ffn = c["emb_dim"], ffn_width(c)
    if d_ffn != d:  # the layer closes with an up-projection to D; the FFN's outputs feed it (no other tail)
        p.out["layer_up_proj"] = 2 * d_ffn * d * tokens
        p.tail = {"layer_up_proj": p.out["layer_up_proj"]}
    if c["per_layer_input_dim"]:  # per-layer embedding: gate D -> P, projection P -> D
        p.out["per_layer_emb"] = terms.ple_layer(d, c["per_layer_input_dim"]) * tokens
    if kind.engram:
        streams = c["mhc_expansion_rate"]
        e_in = c["engram_num_heads"] * c["engram_head_dim"] * (c["engram_max_ngram_size"] - 1)
        p.out["engram_proj"] = terms.engram_proj(e_in, streams, d) * tokens
        p.out["engram_gate"] = 2 * streams * d * tokens
        k, dil = c["engram_kernel_size"], c["engram_max_ngram_size"]
        if c["gdn_conv_taps"] == "full":
            taps = k * tokens
        elif decode:
            taps = seqs.sum(lambda kv: masks.dilated_taps(kv + 1, k, dil) - masks.dilated_taps(kv, k, dil))
        else:
            taps = seqs.sum(lambda L: masks.dilated_taps(L, k, dil))
        p.out["engram_conv"] = p.tail["engram_conv"] = 2 * streams * d * taps
    if c["mhc_expansion_rate"] > 1 and c["mhc_flops"]:  # two mixings per layer: around attention and the FFN
        G = c["mhc_expansion_rate"]
        pre = not (hardware and c["weighted_sum_impl"] == "elementwise")
        p.out["mhc"] = 2 * terms.mhc(G, d, c["mhc_outer_flops"], pre) * tokens
        if pre:  # the pre contraction's stream gradient is each stream's weight times the output's: an outer product
            p.single["mhc"] = 2 * 2 * G * d * tokens
        # The FFN's output is scaled by the per-token post weights, so remat recomputes its last matmul; the tail is
        # the FFN-side residual mixing (G x G over D), whose output only joins the layer's streams.
        for k in ("mlp", "moe_routed", "moe_shared", "moe_combine", "moe_weighted_sum"):
            p.tail.pop(k, None)
        p.tail["mhc"] = 2 * G * G * d * tokens
    if kind.mtp:
        if _has_hyper_head(c, hardware):
            p.out["mhc_head"] = terms.mhc_head(c["mhc_expansion_rate"], d) * tokens
        if c["mtp_eh_proj"]:
            p.out["mtp_eh_proj"] = terms.mtp_eh(d) * tokens
        if c["mtp_norm_flops"]:
            p.out["mtp_norm"] = 2 * 3 * d * tokens
        if c["mtp_logits"]:
            p.out["logits"] = terms.logits(d, _vocab(c, hardware)) * tokens


def _dispatch_groups(c, seqs, decode: bool):
    """(tokens per MoE dispatch group, groups): a group is one row of max_target_length token slots (packed
    documents share their rows; ``per_device_batch_size`` rows); in decode, the batch's new tokens."""
    if decode:
        return seqs.count, 1
    return c["max_target_length"], batch(c)


def _vocab(c, hardware: bool = False) -> int:
    """The output head's width. Hardware: the vocabulary padded to make_vocab_size_divisible_by x
    tensor_parallel_size (padding columns are computed). Model FLOPs: the real vocabulary, unless the
    convention counts Megatron's padded one (its default divisor 128 when none is set)."""
    V, div, tp = c["vocab_size"], c["make_vocab_size_divisible_by"], c["tensor_parallel_size"]
    if hardware:
        return terms.padded_vocab(V, div, tp)
    if c["padded_vocab_in_model_flops"]:
        return terms.padded_vocab(V, div if div > 1 else 128, tp)
    return V


# Components of an MTP row outside its transformer layer (not recomputed by layer remat).
_OUTSIDE_LAYER = frozenset({"mtp_eh_proj", "mtp_norm", "logits", "mhc_head"})


def price_hardware(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict[str, int]:
    """Hardware FLOPs of one row of this kind for the whole step (``c``: the exact view of the config).

    Train: each component's model multiplier, plus under a remat policy one more forward of every layer matmul
    the policy does not save, except the tail (see ``price_forward``), plus one QK^T forward under
    ``flash_backward_recompute``.
    """
    p = price_forward(kind, c, seqs, decode, hardware=True)
    fwd, qk, tail, single, unnamed = p.out, p.qk, p.tail, p.single, p.unnamed
    if kind.inner:  # its output feeds the next layer of its rematerialized unit: nothing is a tail
        tail = {}
    if c["mode"] != "train":
        return {k: _to_int(v * steps) for k, v in fwd.items()}
    saved = REMAT_SAVES.get(c["remat_policy"])
    wi_share = Fraction(2, 3) if len(c["mlp_activations"]) == 2 else Fraction(1, 2)
    if kind.mtp and not c["remat_mtp"] or kind.no_remat:
        saved = None
    # Warm-up: the backward pass recomputes only what the indexer's gradient needs (see WARMUP_REMAT).
    recompute = WARMUP_REMAT if warmup(c) else None
    if recompute is not None and (not kind.computes_index or c["indexer_loss_scaling_factor"] == 0):
        saved = None
    out = {}
    for k, v in fwd.items():
        total = hardware_train_flops(k, v, single.get(k, 0), c)
        if k in p.grad_extra and train_factor(k, c) == 3:
            total += p.grad_extra[k]
        if saved is not None and not (kind.mtp and k in _OUTSIDE_LAYER) and (recompute is None or k in recompute):
            total += recomputed(k, v, qk, tail.get(k, 0), saved, wi_share, unnamed.get(k, 0))
        if k == "core_attention" and c["flash_backward_recompute"] and train_factor(k, c) == 3:
            total += qk
        out[k] = _to_int(total * steps)
    return out


# --- the count --------------------------------------------------------------------------------------------

def _to_int(x) -> int:
    return x if isinstance(x, int) else round(x)


def count(config, segment_lengths: Sequence[int] | Any = None, **overrides) -> Breakdown:
    """Exact per-device per-step FLOPs of ``config``.

    ``segment_lengths``: the real document lengths of one micro-batch on this device (packed THD); every
    mask restarts at a document start and padding is not counted. Without it the batch is
    ``per_device_batch_size`` full sequences of ``max_target_length``. In decode mode it gives each sequence's
    KV-cache length instead of ``decode_kv_length``. ``overrides`` replace config keys for this count only
    (validated; e.g. ``count(cfg, max_target_length=L)`` in a sweep).
    """
    c, plan = resolve_call(config, overrides)
    mode = c["mode"]
    decode = mode == "decode"
    if segment_lengths is not None:
        seqs = Packed(as_lengths(segment_lengths, c))
    elif decode:
        seqs = Uniform(c["decode_kv_length"], batch(c))
    else:
        seqs = Uniform(c["max_target_length"], batch(c))
    steps = c["gradient_accumulation_steps"] if mode == "train" else 1
    train = mode == "train"

    priced = []
    for kind in plan.kinds:
        fwd = price_forward(kind, c, seqs, decode).out
        if train:
            fwd = {k: v * train_factor(k, c) * steps for k, v in fwd.items()}
        elif steps != 1:
            fwd = {k: v * steps for k, v in fwd.items()}
        priced.append({k: v if type(v) is int else round(v) for k, v in fwd.items()})
    tokens = seqs.count if decode else seqs.tokens
    head = _head(c, tokens * head_passes(c, steps))
    head.update(_vision(c, mode, steps))

    def hardware():  # evaluated on first use of Breakdown.hardware_*: its own view, plan and head
        hw = hardware_view(c)
        hw_plan = plan_of(hw)
        hw_seqs, hw_tokens = seqs, tokens
        if segment_lengths is not None and not decode and hw["packed_kernel"] == "row":
            hw_seqs = Uniform(hw["max_target_length"], batch(hw))  # the program runs whole rows, padding too
            hw_tokens = hw_seqs.tokens
        hw_head = _head(hw, hw_tokens * head_passes(hw, steps), hardware=True)
        hw_head.update(_vision(hw, mode, steps))
        return hw_plan, [price_hardware(kind, hw, hw_seqs, decode, steps) for kind in hw_plan.kinds], hw_head

    return make_breakdown(c["model_name"], mode, c["convention"], _to_int(tokens * steps), plan, priced, head,
                          hardware, c["not_priced"])


def _head(c, tokens, hardware: bool = False) -> dict:
    """The rows outside the decoder layers: the output head, and the per-layer-embedding projection."""
    head = {"logits": _to_int(terms.logits(c["emb_dim"], _vocab(c, hardware)) * tokens)}
    if _has_hyper_head(c, hardware):
        head["mhc_head"] = _to_int(terms.mhc_head(c["mhc_expansion_rate"], c["emb_dim"]) * tokens)
    if c["per_layer_input_dim"]:
        head["per_layer_emb_proj"] = _to_int(
            terms.ple_global(c["emb_dim"], c["num_decoder_layers"], c["per_layer_input_dim"]) * tokens)
    return head


def _has_hyper_head(c, hardware: bool) -> bool:
    return c["mhc_expansion_rate"] > 1 and c["mhc_hyper_head"] and (hardware or c["mhc_head_flops"])


def _vision(c, mode: str, steps: int) -> dict:
    """The vision encoder, per step: every sequence row encodes ``vision_images`` images in train and prefill
    (decode reuses the encoded images). Train: a frozen encoder runs forward only; the projector trains (3x)."""
    if not c["vision_layers"] or mode == "decode":
        return {}
    h, layers = c["vision_hidden_dim"], c["vision_layers"]
    seq = c["vision_patches"] + c["vision_extra_tokens"]
    weight, attention = terms.vit_layer(seq, h, c["vision_mlp_dim"])
    stages = lambda key: sum(2 * t * i * o for t, i, o in (map(int, x.split(":")) for x in c[key]))
    encoder = 2 * c["vision_patches"] * c["vision_patch_dim"] * h + layers * weight + stages("vision_encoder_stages")
    projector = stages("vision_projector")
    encoder_passes = 3 if mode == "train" and not c["vision_frozen"] else 1
    projector_passes = 3 if mode == "train" else 1
    if warmup(c):  # the warm-up stage trains the indexer alone: the rest runs forward, or not at all
        encoder_passes = projector_passes = train_factor("vision_encoder", c)
    images = Fraction(c["per_device_batch_size"]).limit_denominator(1 << 20) * c["vision_images"] * steps
    return {"vision_encoder": _to_int(encoder * encoder_passes * images),
            "vision_attention": _to_int(layers * attention * encoder_passes * images),
            "vision_projector": _to_int(projector * projector_passes * images)}


def sweep(config, key: str, values, segment_lengths=None, **overrides) -> list[Breakdown]:
    """``count`` at each value of one config key (e.g. ``sweep(cfg, "max_target_length", lengths)``). In decode
    mode the length is ``decode_kv_length`` (the tokens already cached): sweeping ``max_target_length`` there is
    an error, since decode does not read it."""
    config = from_source(config)
    if key == "max_target_length" and resolve_call(config, overrides)[0]["mode"] == "decode":
        raise ValueError("config key 'max_target_length': a decode step does not read it (it counts one new token "
                         "after decode_kv_length cached ones): sweep 'decode_kv_length' instead")
    return [count(config, segment_lengths, **{**overrides, key: v}) for v in values]
