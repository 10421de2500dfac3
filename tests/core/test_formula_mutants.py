"""Tests that tell a wrong formula from a right one (see tests/mutation/: each kills mutants the rest of the suite let
through). Every expected figure is derived here, independently of maxflops' terms and masks: from the weight shapes
written out as (input width, output width) pairs, or from brute-force enumeration of the mask; never by calling the
code under test twice and comparing. Widths are all distinct (d_qk != d_v, qk_nope != v_head_dim, q_lora !=
kv_lora, ...), byte sizes differ between weights, KV cache, index cache and state, lengths sit on floors and
block boundaries, packed documents repeat lengths, and each knob value is run at least once.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import maxflops
from repo import quietly_inert, quiet_config


def mm(shapes) -> int:
    """FLOPs of one token through matmuls [1, i] x [i, o]: 2 * i * o each."""
    return sum(2 * i * o for i, o in shapes)


def elements(shapes) -> int:
    return sum(i * o for i, o in shapes)


def enum_pairs(L: int, visible) -> int:
    """(query, key) pairs of a length-L sequence with visible(i, j), by enumeration."""
    return sum(1 for i in range(L) for j in range(L) if visible(i, j))


def enum_blocks(L: int, m: int, K: int = 0) -> int:
    """(query, compressed block) pairs: L // m blocks are formed, block b (tokens up to (b+1)m - 1) is visible to
    query t iff (b+1)m - 1 <= t; a top-K query attends min(visible, K) of them (K = 0: all)."""
    total = 0
    for t in range(L):
        visible = sum(1 for b in range(L // m) if (b + 1) * m - 1 <= t)
        total += min(visible, K) if K else visible
    return total


# --- decode_traffic: bytes from weight shapes, each tensor at its own byte size ---------------------------------

WB, KB, IB, SB = 3, 5, 7, 11  # weight, KV cache, index cache and state bytes: all different


def test_traffic_global_layers_with_keys_as_values_and_every_byte_size():
    """Gemma-4-like: window layers with 3 KV heads of 5, a global layer with 2 KV heads of 7 whose keys are its
    values (one cached vector per key), per-layer embeddings; the head padded to 40 columns."""
    D, H, Hkv, hd, Hg, hdg, W, F, P, V, layers = 24, 6, 3, 5, 2, 7, 4, 11, 3, 37, 3
    cfg = maxflops.model_config(
        num_decoder_layers=layers, emb_dim=D, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, global_head_dim=hdg,
        global_num_kv_heads=Hg, share_kv_projections=True, attention_layer_pattern="LLG", sliding_window_size=W,
        mlp_dim=F, per_layer_input_dim=P, vocab_size=V, make_vocab_size_divisible_by=8, per_device_batch_size=3,
        weight_bytes=WB, kv_cache_bytes=KB, index_cache_bytes=IB, state_bytes=SB)
    kvs = [0, 3, 9]
    ffn_ple = [(D, F), (D, F), (F, D), (D, P), (P, D)]
    local = [(D, H * hd), (D, Hkv * hd), (D, Hkv * hd), (H * hd, D)] + ffn_ple
    glob = [(D, H * hdg), (D, Hg * hdg), (H * hdg, D)] + ffn_ple  # one K projection, used as V too
    head = [(D, 40), (D, layers * P)]  # padded vocabulary (37 -> 40), the per-layer-embedding projection
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs)
    c = t.components
    assert c["weights"] == WB * (2 * elements(local) + elements(glob) + elements(head))
    assert c["embeddings"] == WB * len(kvs) * D
    local_keys = sum(min(kv + 1, W) for kv in kvs)
    global_keys = sum(kv + 1 for kv in kvs)
    assert c["kv_read"] == KB * (2 * local_keys * 2 * Hkv * hd + global_keys * Hg * hdg)
    assert c["kv_write"] == KB * len(kvs) * (2 * 2 * Hkv * hd + Hg * hdg)
    assert c["index_read"] == c["index_write"] == c["state"] == 0


# DeepSeek-V4-like, every width distinct: D 40, H 6, head 14, KV heads 2, q LoRA 9, 4 output groups of rank 11,
# window 5, CSA ratio 3, HCA ratio 7, top-k 2, indexer 5 heads of 6, FFN 13, 3 mHC streams, vocabulary 17.
V4 = dict(model_name="v4", attention_type="compressed", attention_layer_pattern="LSHS", num_decoder_layers=4,
          emb_dim=40, num_query_heads=6, num_kv_heads=2, head_dim=14, q_lora_rank=9, o_groups=4, o_lora_rank=11,
          sliding_window_size=5, csa_compress_ratio=3, hca_compress_ratio=7, use_sparse_indexer=True, index_topk=2,
          index_n_heads=5, index_head_dim=6, mlp_dim=13, mhc_expansion_rate=3, mhc_hyper_head=True, vocab_size=17)
D4, H4, HD4, NKV4, RQ4, G4, RO4, F4, S4, V4V, NI4, HI4, W4, M_S, M_H, K4 = (40, 6, 14, 2, 9, 4, 11, 13, 3, 17, 5, 6,
                                                                           5, 3, 7, 2)
V4_PROJ = [(D4, RQ4), (RQ4, H4 * HD4), (D4, NKV4 * HD4)] + [(H4 * HD4 // G4, RO4)] * G4 + [(G4 * RO4, D4)]
V4_COMPRESSOR = {"S": [(D4, 2 * HD4)] * 2, "H": [(D4, HD4)] * 2, "L": []}  # kv and gate (CSA's overlap: 2x wide)
V4_INDEXER = [(RQ4, NI4 * HI4), (D4, NI4), (D4, 2 * HI4), (D4, 2 * HI4)]  # q, head weights, its compressor's kv, gate
V4_FFN = [(D4, F4), (D4, F4), (F4, D4)]
V4_MHC_PROJ = [(S4 * D4, 2 * S4 + S4 * S4)] * 2  # two mixings per layer
V4_HEAD = [(S4 * D4, S4), (D4, V4V)]


def test_traffic_compressed_layers_blocks_complete_on_the_last_token_of_a_block():
    """kv + 1 tokens cached after the step: a block of m closes when (kv + 1) % m == 0. The lengths put the new token
    on the last and on the first position of a block (kv = 2, 20 vs 3, 6 for m = 3; 6, 13, 20 vs 7 for m = 7)."""
    kvs = [2, 3, 6, 7, 13, 20]
    cfg = maxflops.model_config(**V4, mode="decode", per_device_batch_size=len(kvs), weight_bytes=WB,
                                kv_cache_bytes=KB, index_cache_bytes=IB)
    c = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    entry = NKV4 * HD4  # one vector per cached position is the key and the value
    read = write = idx_read = idx_write = 0
    weights = elements(V4_HEAD)
    for letter in "LSHS":
        m = {"S": M_S, "H": M_H}.get(letter)
        weights += elements(V4_PROJ + V4_COMPRESSOR[letter] + V4_FFN + V4_MHC_PROJ)
        weights += elements(V4_INDEXER) if letter == "S" else 0
        for kv in kvs:
            window = sum(1 for j in range(kv + 1) if kv - j < W4)
            visible = sum(1 for b in range(kv + 1) if m and (b + 1) * m - 1 <= kv)
            read += window + (min(visible, K4) if letter == "S" else visible)
            closes = bool(m) and (kv + 1) % m == 0
            write += 1 + closes
            if letter == "S":
                idx_read += visible
                idx_write += closes
    assert c["kv_read"] == KB * entry * read
    assert c["kv_write"] == KB * entry * write
    assert c["index_read"] == IB * HI4 * idx_read
    assert c["index_write"] == IB * HI4 * idx_write
    assert c["weights"] == WB * weights
    assert c["embeddings"] == WB * len(kvs) * D4


@pytest.mark.parametrize("impl", ["ideal", "capacity", "dense", "ragged_dense"])
@pytest.mark.parametrize("batch", [2, 5])
def test_traffic_experts_read_per_moe_impl(impl, batch):
    """Plain (one-activation) experts, 7 of them, 2 per token: a batch of 2 reaches at most 4, of 5 all 7; every
    implementation but 'ideal' reads all of them."""
    D, H, hd, E, k, Fe, V = 20, 2, 9, 7, 2, 5, 13
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=D, num_query_heads=H, num_kv_heads=1, head_dim=hd,
                                num_experts=E, num_experts_per_tok=k, moe_mlp_dim=Fe, mlp_activations=["gelu"],
                                vocab_size=V, moe_impl=impl, per_device_batch_size=batch, mode="decode",
                                decode_kv_length=4, weight_bytes=WB, kv_cache_bytes=KB)
    reached = min(batch * k, E) if impl == "ideal" else E
    shapes = [(D, H * hd), (D, hd), (D, hd), (H * hd, D), (D, E)] + reached * [(D, Fe), (Fe, D)] + [(D, V)]
    c = maxflops.decode_traffic(cfg).components
    assert c["weights"] == WB * elements(shapes)
    assert c["kv_read"] == KB * batch * 5 * 2 * hd and c["kv_write"] == KB * batch * 2 * hd


def test_traffic_gated_delta_net_state_and_conv_window():
    D, nk, nv, dk, dv, K, V, B = 16, 2, 3, 5, 7, 4, 11, 2
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=D, attention_layer_pattern="D", gdn_num_key_heads=nk,
                                gdn_num_value_heads=nv, gdn_key_head_dim=dk, gdn_value_head_dim=dv,
                                gdn_conv_kernel_dim=K, mlp_dim=9, vocab_size=V, per_device_batch_size=B,
                                mode="decode", decode_kv_length=30, weight_bytes=WB, state_bytes=SB)
    channels = 2 * nk * dk + nv * dv  # q, k and v go through the conv
    shapes = [(D, nk * dk)] * 2 + [(D, nv * dv)] * 2 + [(D, nv)] * 2 + [(nv * dv, D)]  # q k v z, beta a, out
    shapes += [(D, 9), (D, 9), (9, D), (D, V)]
    c = maxflops.decode_traffic(cfg).components
    assert c["weights"] == WB * (elements(shapes) + channels * K)  # the conv: K taps per channel
    # read and written: the state [dk, dv] per value head and the last K - 1 conv inputs per channel
    assert c["state"] == SB * B * 2 * (nv * dk * dv + (K - 1) * channels)
    assert c["kv_read"] == c["kv_write"] == 0


def test_traffic_dsa_index_keys_at_their_own_byte_size():
    D, H, RQ, RKV, nope, rope, v, NI, HI, K = 30, 3, 8, 10, 4, 3, 6, 2, 5, 3
    kvs = [0, 2, 3, 9]
    cfg = maxflops.model_config(num_decoder_layers=2, emb_dim=D, attention_type="mla", num_query_heads=H,
                                num_kv_heads=H, q_lora_rank=RQ, kv_lora_rank=RKV, qk_nope_head_dim=nope,
                                qk_rope_head_dim=rope, v_head_dim=v, use_sparse_indexer=True, index_n_heads=NI,
                                index_head_dim=HI, index_topk=K, index_topk_freq=2, index_skip_offset=1,
                                mode="decode", per_device_batch_size=len(kvs), kv_cache_bytes=KB,
                                index_cache_bytes=IB, weight_bytes=WB)
    c = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    latent = RKV + rope
    assert c["kv_read"] == KB * 2 * sum(min(kv + 1, K) for kv in kvs) * latent
    assert c["kv_write"] == KB * 2 * len(kvs) * latent
    # only layer 1 (1-based) computes its top-k: it scores every cached index key and the new one
    assert c["index_read"] == IB * sum(kv + 1 for kv in kvs) * HI
    assert c["index_write"] == IB * len(kvs) * HI


# --- packed documents outside the exact convention (Packed.longer_than, Packed.sum_scalar) ----------------------

MLA = dict(emb_dim=30, attention_type="mla", num_query_heads=3, num_kv_heads=3, q_lora_rank=8, kv_lora_rank=10,
           qk_nope_head_dim=4, qk_rope_head_dim=3, v_head_dim=6, use_sparse_indexer=True, index_n_heads=2,
           index_head_dim=5, vocab_size=19, mlp_dim=7)
MLA_IDX = [(8, 2 * 5), (30, 5), (30, 2)]  # indexer: q from the q latent, one key head, head weights
IDX_PAIR = 2 * 2 * 5 + 2 * 2  # q.k over 2 heads of 5, then the weighted head reduction


def test_maxtext_indexer_skips_documents_within_the_topk():
    """MaxText's rule: no indexer for a document of at most K tokens. Documents of exactly K (5) are skipped, those
    of K + 1 (6, twice) are not; the indexer is charged 3x on every layer over half the square."""
    K, docs = 5, [5, 6, 6, 3, 5, 9]
    cfg = maxflops.model_config(**MLA, num_decoder_layers=2, index_topk=K, convention="maxtext",
                                max_target_length=12, per_device_batch_size=3)
    b = maxflops.count(cfg, segment_lengths=docs)
    run = [L for L in docs if L > K]
    assert b.components["indexer_proj"] == 2 * 3 * mm(MLA_IDX) * sum(run)
    assert b.components["indexer_score"] == 2 * 3 * IDX_PAIR * Fraction(sum(L * L for L in run), 2)


def test_hardware_dsa_indexer_skip_short_on_packed_documents():
    K, docs = 5, [5, 6, 6, 3, 5, 9]
    cfg = maxflops.model_config(**MLA, num_decoder_layers=1, index_topk=K, mode="prefill", max_target_length=12,
                                per_device_batch_size=3, indexer_skip_short=True)
    hw = maxflops.count(cfg, segment_lengths=docs).hardware_components
    run = [L for L in docs if L > K]
    assert hw["indexer_proj"] == mm(MLA_IDX) * sum(run)
    assert hw["indexer_score"] == IDX_PAIR * sum(enum_pairs(L, lambda i, j: j <= i) for L in run)


def test_maxtext_compressed_pairs_over_repeated_document_lengths():
    """compressed_pairs='maxtext' per document: HCA L^2/(2m); CSA L^2/m * (k/N - (k/N)^2/2), N = L // m,
    k = min(K, N), 0 when N = 0. Lengths repeat, so a per-distinct-length sum must weigh each by its count."""
    docs = [9, 9, 9, 4, 2, 16, 16]
    cfg = maxflops.model_config(**V4, compressed_pairs="maxtext", mode="prefill", max_target_length=16,
                                per_device_batch_size=5)
    rows = maxflops.count(cfg, segment_lengths=docs).layers
    per_key = 2 * H4 * (HD4 + HD4)
    window = sum(enum_pairs(L, lambda i, j: 0 <= i - j < W4) for L in docs)

    def csa(L):
        N = L // M_S
        k = min(K4, N)
        return Fraction(L * L, M_S) * (Fraction(k, N) - Fraction(k * k, 2 * N * N)) if N else 0

    assert rows[1].components["core_attention"] == round(per_key * (window + sum(csa(L) for L in docs)))
    assert rows[2].components["core_attention"] == round(per_key * (window + sum(Fraction(L * L, 2 * M_H)
                                                                                 for L in docs)))


def test_blocked_decode_over_repeated_cache_lengths():
    """A tiled kernel reads the new token's visible keys rounded out to whole KV tiles (the last tile stops at the
    new token). Cache lengths repeat, so a per-distinct-length sum must weigh each by its count."""
    H, hd, W, C, bkv = 2, 5, 6, 4, 4
    kvs = [9, 9, 9, 3, 14, 14]
    cfg = maxflops.model_config(num_decoder_layers=3, emb_dim=20, num_query_heads=H, num_kv_heads=1, head_dim=hd,
                                attention_layer_pattern="GLC", sliding_window_size=W, chunk_attn_window_size=C,
                                mode="decode", per_device_batch_size=len(kvs), attention_impl="blocked",
                                attention_block_kv=bkv, vocab_size=11, mlp_dim=7)
    rows = maxflops.count(cfg, segment_lengths=kvs).layers

    def tiles(kv, first):  # key tiles from the one holding the first visible key to the one holding kv
        keys = range((first // bkv) * bkv, min((kv // bkv + 1) * bkv, kv + 1))
        return len(keys)

    first = {"G": lambda kv: 0, "L": lambda kv: max(kv - W + 1, 0), "C": lambda kv: kv // C * C}
    for row, letter in zip(rows, "GLC"):
        keys = sum(tiles(kv, first[letter](kv)) for kv in kvs)
        assert row.hardware_components["core_attention"] == 2 * H * 2 * hd * keys, letter


def test_uniform_blocked_decode_counts_every_sequence():
    H, hd, bkv, B, kv = 2, 5, 4, 3, 10
    cfg = quiet_config(num_decoder_layers=1, emb_dim=20, num_query_heads=H, num_kv_heads=1, head_dim=hd,
                                mode="decode", per_device_batch_size=B, decode_kv_length=kv, vocab_size=11,
                                mlp_dim=7, attention_impl="blocked", attention_block_kv=bkv, mla_absorbed=False)
    hw = maxflops.count(cfg).hardware_components
    assert hw["core_attention"] == B * 2 * H * 2 * hd * min((kv // bkv + 1) * bkv, kv + 1)


# --- absorbed MLA in training ------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["none", "minimal_with_context", "full"])
def test_absorbed_mla_training_recomputes_qk_at_the_latent_width(policy):
    """Absorbed MLA attends in the latent: q.k over kv_lora + rope (13), p.v over kv_lora (10) per head. Training with
    flash recomputes QK^T once more; a policy saving the context recomputes QK^T again, 'full' the whole core."""
    H, RKV, rope, L, B = 3, 10, 3, 9, 2
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=30, attention_type="mla", num_query_heads=H,
                                num_kv_heads=H, q_lora_rank=8, kv_lora_rank=RKV, qk_nope_head_dim=4,
                                qk_rope_head_dim=rope, v_head_dim=6, mla_absorbed=True, max_target_length=L,
                                per_device_batch_size=B, flash_backward_recompute=True, remat_policy=policy,
                                vocab_size=19, mlp_dim=7)
    pairs = B * enum_pairs(L, lambda i, j: j <= i)
    qk, pv = 2 * H * (RKV + rope) * pairs, 2 * H * RKV * pairs
    remat = {"none": 0, "minimal_with_context": qk, "full": qk + pv}[policy]
    assert maxflops.count(cfg).hardware_components["core_attention"] == 3 * (qk + pv) + qk + remat


def test_absorbed_mla_projections_from_shapes():
    D, H, RQ, RKV, nope, rope, v, L = 30, 3, 8, 10, 4, 3, 6, 5
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=D, attention_type="mla", num_query_heads=H,
                                num_kv_heads=H, q_lora_rank=RQ, kv_lora_rank=RKV, qk_nope_head_dim=nope,
                                qk_rope_head_dim=rope, v_head_dim=v, mla_absorbed=True, max_target_length=L,
                                mode="prefill", vocab_size=19, mlp_dim=7)
    hw = maxflops.count(cfg).hardware_components
    # q: D -> RQ -> H*(nope+rope); q_nope absorbed per head nope -> RKV; kv: D -> RKV + rope only
    assert hw["qkv_proj"] == L * mm([(D, RQ), (RQ, H * (nope + rope)), (H * nope, RKV), (D, RKV + rope)])
    # output: per head the latent RKV -> v, then H*v -> D
    assert hw["out_proj"] == L * mm([(H * RKV, v), (H * v, D)])


# --- remat: every policy, a plain (one-activation) FFN and plain experts ------------------------------------------

# What each policy saves, from MaxText's checkpoint names: q/k/v ('qkv'), the output projection ('out'), the attention
# output ('context': only QK^T is recomputed), the MLP's up projection ('wi') and down projection ('wo').
POLICY_SAVES = {
    "none": None,
    "full": set(),
    "reversible": set(),  # (its tails too: a reversible layer runs its whole forward again)
    "minimal": {"qkv", "out", "wi", "wo"},
    "minimal_offloaded": {"qkv", "out", "wi", "wo"},
    "minimal_with_context": {"qkv", "out", "wi", "wo", "context"},
    "save_dot_with_context_except_mlp": {"qkv", "context", "out"},
    "save_dot_except_mlpwi": {"qkv", "out", "wo"},
    "save_dot_except_mlp": {"qkv", "out"},
    "save_qkv_proj": {"qkv"},
    "qkv_proj_offloaded": {"qkv"},
    "save_out_proj": {"out"},
}


def test_every_remat_policy_value_is_covered():
    from maxflops.schema import SCHEMA

    assert set(SCHEMA["remat_policy"].choices) == set(POLICY_SAVES)


@pytest.mark.parametrize("policy", sorted(POLICY_SAVES))
def test_remat_plain_ffn_and_plain_experts(policy):
    """Layer 0 a dense plain FFN (up D -> F, down F -> D; the down projection's output is only added to the residual,
    so it is never recomputed), layer 1 plain routed experts (their outputs are scaled by the router: the down
    projection is recomputed unless saved)."""
    D, H, Hkv, hd, F, E, k, Fe, L, B = 24, 4, 2, 5, 11, 5, 2, 7, 6, 2
    cfg = maxflops.model_config(num_decoder_layers=2, emb_dim=D, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd,
                                mlp_dim=F, mlp_activations=["relu"], num_experts=E, num_experts_per_tok=k,
                                moe_mlp_dim=Fe, first_num_dense_layers=1, max_target_length=L,
                                per_device_batch_size=B, remat_policy=policy, vocab_size=13)
    T = B * L
    saves = POLICY_SAVES[policy]
    pairs = B * enum_pairs(L, lambda i, j: j <= i)
    qk = pv = 2 * H * hd * pairs
    qkv = T * mm([(D, H * hd), (D, Hkv * hd), (D, Hkv * hd)])
    out = T * mm([(H * hd, D)])
    up, down = T * mm([(D, F)]), T * mm([(F, D)])
    e_up, e_down = k * T * mm([(D, Fe)]), k * T * mm([(Fe, D)])

    def recomputed(name, fwd):
        if saves is None or name in saves:
            return 0
        return fwd

    rows = maxflops.count(cfg).layers
    for row, ffn in zip(rows[:2], ("dense", "moe")):
        hw = row.hardware_components
        assert hw["qkv_proj"] == 3 * qkv + recomputed("qkv", qkv), ffn
        assert hw["out_proj"] == 3 * out + recomputed("out", out), ffn
        core = 0 if saves is None else qk if "context" in saves else qk + pv
        assert hw["core_attention"] == 3 * (qk + pv) + core, ffn
        if ffn == "dense":
            tail = down if policy == "reversible" else 0  # the down projection: a tail, but for a reversible layer
            assert hw["mlp"] == 3 * (up + down) + recomputed("wi", up) + tail, policy
        else:
            assert hw["moe_routed"] == 3 * (e_up + e_down) + recomputed("wi", e_up) + recomputed("wo", e_down), policy


# --- MoE implementations ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("impl", ["ideal", "capacity", "dense", "ragged_dense"])
def test_moe_impl_routed_flops(impl):
    """Per token and expert a gated expert is 3 matmuls of D x Fe. 'ideal': k experts per token; 'capacity': every
    expert runs ceil(cf * L * k / E) slots per row; 'dense': every expert every token; 'ragged_dense': each of the
    k routed rows of a token against every expert."""
    D, E, k, Fe, L, B, cf = 16, 5, 2, 7, 9, 2, 1.5
    cfg = quiet_config(num_decoder_layers=1, emb_dim=D, num_query_heads=2, num_kv_heads=2, head_dim=4,
                                num_experts=E, num_experts_per_tok=k, moe_mlp_dim=Fe, max_target_length=L,
                                per_device_batch_size=B, mode="prefill", moe_impl=impl, capacity_factor=cf,
                                vocab_size=13)
    expert = mm([(D, Fe), (D, Fe), (Fe, D)])
    slots = math.ceil(Fraction(3, 2) * L * k / E)  # 27 / 5 -> 6
    rows = {"ideal": k * B * L, "capacity": E * slots * B, "dense": E * B * L, "ragged_dense": E * k * B * L}[impl]
    assert maxflops.count(cfg).hardware_components["moe_routed"] == expert * rows


# --- DeepSeek-V4: the indexer skip on 'S' layers, indexer_proj_attn in training ---------------------------------

@pytest.mark.parametrize("hardware", [True, False])
def test_csa_indexer_skips_documents_with_no_more_blocks_than_the_topk(hardware):
    """An 'S' layer's indexer runs for a document with more visible blocks than the top-k at its last token:
    L // m > K, i.e. L >= (K + 1) m = 9 with m = 3, K = 2. Documents of 8 are skipped, of 9 (twice) are not.
    Hardware reads indexer_skip_short, model FLOPs indexer_skip_within_topk."""
    docs = [8, 9, 9, 4, 12]
    knob = {"indexer_skip_short" if hardware else "indexer_skip_within_topk": True}
    cfg = maxflops.model_config(**{**V4, "attention_layer_pattern": "S", "num_decoder_layers": 1}, mode="prefill",
                                max_target_length=16, per_device_batch_size=3, **knob)
    b = maxflops.count(cfg, segment_lengths=docs)
    comps = b.hardware_components if hardware else b.components
    run = [L for L in docs if L // M_S > K4]
    assert comps["indexer_proj"] == mm(V4_INDEXER) * sum(run)
    assert comps["indexer_score"] == (2 * NI4 * HI4 + 2 * NI4) * sum(enum_blocks(L, M_S) for L in run)
    other = b.components if hardware else b.hardware_components  # the other view does not skip
    assert other["indexer_proj"] == mm(V4_INDEXER) * sum(docs)


@pytest.mark.parametrize("loss, factor", [(0.0, 1), (0.25, 2)])
def test_indexer_proj_attn_trains_like_the_indexer_projections(loss, factor):
    """indexer_proj_split='attention' moves the indexer's projections to an attention component; in training they
    keep the indexer's rule: 2x with a KL loss (forward and weight gradient; the inputs are detached), else 1x."""
    L, B = 11, 2
    cfg = maxflops.model_config(**V4, indexer_proj_split="attention", indexer_loss_scaling_factor=loss,
                                max_target_length=L, per_device_batch_size=B)
    b = maxflops.count(cfg)
    assert "indexer_proj" not in b.components
    assert b.components["indexer_proj_attn"] == factor * 2 * B * L * mm(V4_INDEXER)  # two 'S' layers
    # hardware FLOPs ignore reporting knobs (config.REPORTING_KNOBS): the same matmuls, filed as indexer_proj
    assert b.hardware_components["indexer_proj"] == factor * 2 * B * L * mm(V4_INDEXER)


# --- Megatron-LM #6148 / #6753: the top-k scaled at floor(mean length) -----------------------------------------

@pytest.mark.parametrize("convention", ["megatron_pr6148", "megatron_pr6753"])
def test_megatron_dsa_scaling_at_the_floor_of_the_mean_length(convention):
    """Documents 3, 7, 8: Q = sum L^2 = 122, T = 18, s = Q / T = 61/9 = 6.78 below K = 10, so e = floor(s) = 6 keys
    per query: attended e*s - e^2/2 of the s^2/2 a mean-length sequence has, scaling the dense Q/2 pairs."""
    docs, K, H, RKV, nope, rope, v = [3, 7, 8], 10, 3, 10, 4, 3, 6
    cfg = maxflops.model_config(**{**MLA, "index_topk": K}, num_decoder_layers=1, max_target_length=8,
                                per_device_batch_size=3, convention=convention)
    s = Fraction(122, 18)
    e = 6
    pairs = Fraction(122, 2) * (e * s - Fraction(e * e, 2)) / (s * s / 2)
    per_pair = 2 * H * ((RKV + rope + RKV) if convention == "megatron_pr6753" else (nope + rope + v))
    assert maxflops.count(cfg, segment_lengths=docs).components["core_attention"] == round(3 * per_pair * pairs)


@pytest.mark.parametrize("rule, slots", [("ceil", 42), ("maxtext", 41)])
def test_capacity_rules_at_a_fractional_capacity(rule, slots):
    """64 tokens per row, k = 2 of E = 4 experts, factor 1.3: 'ceil' gives ceil(1.3 * 64 * 2 / 4) = ceil(41.6) = 42
    slots; MaxText's rule int(max(ceil(64 * 2 / 4) * 1.3, 1.3)) = int(41.6) = 41."""
    D, E, k, Fe, L, B = 8, 4, 2, 3, 64, 2
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=D, num_query_heads=2, num_kv_heads=2, head_dim=4,
                                num_experts=E, num_experts_per_tok=k, moe_mlp_dim=Fe, max_target_length=L,
                                per_device_batch_size=B, mode="prefill", moe_impl="capacity", capacity_factor=1.3,
                                capacity_rule=rule, vocab_size=13)
    assert maxflops.count(cfg).hardware_components["moe_routed"] == B * E * slots * mm([(D, Fe), (D, Fe), (Fe, D)])


# --- megatron conventions: every DSA rule ------------------------------------------------------------------------

@pytest.mark.parametrize("convention, K", [("megatron", 5), ("megatron", 10), ("megatron_main", 5)])
def test_megatron_dsa_rules_at_the_mean_length(convention, K):
    """Documents 3, 7, 8 (Q = 122, T = 18, s = 61/9). The seed rule: the dense Q/2 scaled by
    min(1, (K*s - K^2/2) / (s^2/2)); main: DSA counted as dense MLA, half the square, no indexer."""
    H, nope, rope, v = 3, 4, 3, 6
    cfg = maxflops.model_config(**{**MLA, "index_topk": K}, num_decoder_layers=1, max_target_length=8,
                                per_device_batch_size=3, convention=convention)
    s = Fraction(122, 18)
    dense = Fraction(122, 2)
    pairs = dense if convention == "megatron_main" or s <= K else dense * (K * s - Fraction(K * K, 2)) / (s * s / 2)
    b = maxflops.count(cfg, segment_lengths=[3, 7, 8])
    assert b.components["core_attention"] == round(3 * 2 * H * (nope + rope + v) * pairs)
    assert ("indexer_score" in b.components) == (convention != "megatron_main")


# --- the plan: index reuse, CSA without an indexer, MTP letters ----------------------------------------------------

@pytest.mark.parametrize("freq, offset, computes", [
    (2, 0, [True, False, True, False, True]),  # offset 0 counts from layer 1: layers 1, 3, 5 (1-based)
    (2, 1, [True, False, True, False, True]),
    (2, 3, [True, True, True, False, True]),  # layers up to the offset compute, then every second one
    (3, 2, [True, True, False, False, True]),
])
def test_glm5_index_reuse_by_layer(freq, offset, computes):
    L = 6
    cfg = maxflops.model_config(**{**MLA, "index_topk": 4}, num_decoder_layers=5, index_topk_freq=freq,
                                index_skip_offset=offset, max_target_length=L, mode="prefill")
    b = maxflops.count(cfg)
    assert [r.computes_index for r in b.layers[:5]] == computes
    assert b.components["indexer_proj"] == sum(computes) * L * mm(MLA_IDX)


def test_csa_without_an_indexer_attends_every_visible_block():
    L = 20
    cfg = maxflops.model_config(**{**V4, "use_sparse_indexer": False, "attention_layer_pattern": "S",
                                   "num_decoder_layers": 1}, max_target_length=L, mode="prefill")
    row = maxflops.count(cfg).layers[0]
    window = enum_pairs(L, lambda i, j: 0 <= i - j < W4)
    assert row.components["core_attention"] == 2 * H4 * 2 * HD4 * (window + enum_blocks(L, M_S))
    assert "indexer_score" not in row.components


def test_megatron_mtp_module_takes_the_pattern_letter_after_the_decoder():
    """after_decoder: MTP module k is layer n + k: with 'LG' over 3 layers (L G L) module 1 is layer 4, a 'G'."""
    cfg = maxflops.model_config(num_decoder_layers=3, attention_layer_pattern="LG", sliding_window_size=3,
                                mtp_num_layers=2, mtp_layer_numbering="after_decoder", emb_dim=16, vocab_size=11)
    assert [r.mixer for r in maxflops.count(cfg).layers] == ["window", "global", "window", "global", "window", ""]


# --- widths: MLA to a latent FFN, the double-wide MLP's tail, the MTP eh projection under remat ---------------------

def test_mla_output_projects_to_the_attention_output_dim():
    D, A, H, v, L = 30, 12, 3, 6, 5
    cfg = quietly_inert(lambda: maxflops.model_config(  # (MLA's indexer keys are inert without the indexer)
        **{**MLA, "use_sparse_indexer": False}, num_decoder_layers=1, attention_output_dim=A, max_target_length=L,
        mode="prefill"))
    b = maxflops.count(cfg)
    assert b.components["out_proj"] == L * mm([(H * v, A)])
    assert b.components["layer_up_proj"] == L * mm([(A, D)])


def test_full_remat_of_a_double_wide_mlp_keeps_its_down_projection():
    """The KV-shared last layer runs its gated MLP at 2F: full remat recomputes gate and up (D -> 2F), not the down
    projection 2F -> D, whose output only joins the residual."""
    D, H, hd, F, L = 16, 2, 4, 5, 7
    cfg = maxflops.model_config(num_decoder_layers=2, emb_dim=D, num_query_heads=H, num_kv_heads=1, head_dim=hd,
                                mlp_dim=F, num_kv_shared_layers=1, double_wide_kv_shared_mlp=True,
                                max_target_length=L, remat_policy="full", vocab_size=11)
    rows = maxflops.count(cfg).layers
    for row, width in ((rows[0], F), (rows[1], 2 * F)):
        up, down = L * mm([(D, width), (D, width)]), L * mm([(width, D)])
        assert row.hardware_components["mlp"] == 3 * (up + down) + up


def test_full_remat_of_an_mtp_module_does_not_recompute_its_eh_projection_or_head():
    D, V, L = 16, 11, 7
    cfg = maxflops.model_config(num_decoder_layers=1, emb_dim=D, num_query_heads=2, num_kv_heads=2, head_dim=4,
                                mlp_dim=5, mtp_num_layers=1, vocab_size=V, max_target_length=L,
                                remat_policy="full")
    mtp = maxflops.count(cfg).layers[1].hardware_components
    assert mtp["mtp_eh_proj"] == 3 * L * mm([(2 * D, D)])
    assert mtp["logits"] == 3 * L * mm([(D, V)])
    assert mtp["mlp"] == 3 * L * mm([(D, 5), (D, 5), (5, D)]) + L * mm([(D, 5), (D, 5)])


# --- decode on a CSA layer: every dsa_impl ---------------------------------------------------------------------

@pytest.mark.parametrize("impl", ["ideal", "gather_k", "dense", "blocked"])
def test_csa_decode_blocks_read_per_dsa_impl(impl):
    """The new token's compressed blocks: the top-k of its visible blocks ('ideal', 'gather_k'), or every cached one
    ('dense' masks them, a dynamic-mask tiled kernel reads them all)."""
    kvs = [1, 2, 8, 14, 20]
    cfg = maxflops.model_config(**{**V4, "attention_layer_pattern": "S", "num_decoder_layers": 1}, mode="decode",
                                per_device_batch_size=len(kvs), dsa_impl=impl)
    row = maxflops.count(cfg, segment_lengths=kvs).layers[0]
    keys = 0
    for kv in kvs:
        visible = sum(1 for b in range(kv + 1) if (b + 1) * M_S - 1 <= kv)
        keys += min(kv + 1, W4) + (min(visible, K4) if impl in ("ideal", "gather_k") else visible)
    assert row.hardware_components["core_attention"] == 2 * H4 * 2 * HD4 * keys


def test_maxtext_indexer_skip_on_a_row_of_exactly_the_topk():
    """MaxText charges no indexer for a sequence of at most K tokens: T = K skips it, T = K + 1 runs it."""
    K = 6
    for T, runs in ((K, False), (K + 1, True)):
        cfg = maxflops.model_config(**{**MLA, "index_topk": K}, num_decoder_layers=1, convention="maxtext",
                                    max_target_length=T, per_device_batch_size=2)
        proj = maxflops.count(cfg).components.get("indexer_proj", 0)
        assert proj == (3 * 2 * T * mm(MLA_IDX) if runs else 0)
