"""Features added for MaxText's model zoo, each checked against a hand derivation from the weight shapes and a
brute-force enumeration of the mask (never against the engine's own terms), with every dimension distinct."""

from __future__ import annotations

import maxflops


def _pairs(T: int, visible) -> int:
    return sum(1 for i in range(T) for j in range(T) if visible(i, j))


def test_gemma4_global_widths_shared_kv_and_shared_expert_width():
    D, H, Hkv, hd, Hg, hdg, W, T, B = 48, 6, 3, 10, 2, 14, 3, 11, 2
    E, k, F_moe, F_shared, V = 5, 2, 9, 13, 37
    cfg = maxflops.model_config(
        num_decoder_layers=7, emb_dim=D, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, global_head_dim=hdg,
        global_num_kv_heads=Hg, share_kv_projections=True, attention_layer_pattern="LLLLLG", sliding_window_size=W,
        num_experts=E, num_experts_per_tok=k, moe_mlp_dim=F_moe, shared_experts=1, shared_expert_mlp_dim=F_shared,
        vocab_size=V, max_target_length=T, per_device_batch_size=B, mlp_dim=17)
    # weights (in, out) one token multiplies, per layer kind
    local = [(D, H * hd), (D, Hkv * hd), (D, Hkv * hd), (H * hd, D)]
    glob = [(D, H * hdg), (D, Hg * hdg), (H * hdg, D)]  # K reused as V: one projection
    moe = [(D, E)] + k * [(D, F_moe), (D, F_moe), (F_moe, D)] + [(D, F_shared), (D, F_shared), (F_shared, D)]
    weight = lambda mats: sum(2 * a * b for a, b in mats)
    window = _pairs(T, lambda i, j: i - W < j <= i)
    causal = _pairs(T, lambda i, j: j <= i)
    per_seq = (6 * (weight(local) * T + 4 * H * hd * window) + (weight(glob) * T + 4 * H * hdg * causal)
               + 7 * weight(moe) * T + weight([(D, V)]) * T)
    b = maxflops.count(cfg)
    assert b.total == 3 * B * per_seq
    assert b.attention == 3 * B * (6 * 4 * H * hd * window + 4 * H * hdg * causal)


def test_latent_ffn_attention_output_dim_and_up_projection():
    D, H, Hkv, hd, A, T, B, E, k, F, V = 48, 6, 2, 10, 20, 9, 3, 7, 3, 11, 29
    cfg = maxflops.model_config(
        num_decoder_layers=2, emb_dim=D, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, attention_output_dim=A,
        num_experts=E, num_experts_per_tok=k, moe_mlp_dim=F, vocab_size=V, max_target_length=T,
        per_device_batch_size=B)
    attn = [(D, H * hd), (D, Hkv * hd), (D, Hkv * hd), (H * hd, A)]
    moe = [(A, E)] + k * [(A, F), (A, F), (F, A)]
    up = [(A, D)]
    weight = lambda mats: sum(2 * a * b for a, b in mats)
    causal = _pairs(T, lambda i, j: j <= i)
    per_seq = 2 * (weight(attn + moe + up) * T + 4 * H * hd * causal) + weight([(D, V)]) * T
    b = maxflops.count(cfg)
    assert b.total == 3 * B * per_seq
    assert b.components["layer_up_proj"] == 3 * B * 2 * weight(up) * T
    # Full remat recomputes every layer matmul but the up-projection (its output only joins the residual).
    hw = maxflops.count(cfg, remat_policy="full").hardware_flops
    layer_fwd = B * (weight(attn + moe + up) * T + 4 * H * hd * causal)
    assert hw == b.total + 2 * (layer_fwd - B * weight(up) * T)


def test_dsa_dense_computes_the_full_square_with_the_topk_mask():
    H, nope, rope, v, K, T, B, layers = 3, 7, 5, 11, 4, 13, 2, 2
    cfg = maxflops.model_config(
        num_decoder_layers=layers, emb_dim=40, attention_type="mla", num_query_heads=H, num_kv_heads=H, q_lora_rank=9,
        kv_lora_rank=6, qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=v, use_sparse_indexer=True,
        index_topk=K, index_n_heads=2, index_head_dim=3, max_target_length=T, per_device_batch_size=B)
    ideal = maxflops.count(cfg, mode="prefill")
    dense = maxflops.count(cfg, mode="prefill", dsa_impl="dense")
    topk = _pairs(T, lambda i, j: j <= i and j >= i - K + 1)  # as many keys as min(i+1, K) per query
    square = _pairs(T, lambda i, j: True)
    per_pair = 2 * H * (nope + rope) + 2 * H * v
    assert ideal.hardware_components["core_attention"] == layers * B * per_pair * topk
    assert dense.hardware_components["core_attention"] == layers * B * per_pair * square
    assert dense.hardware_components["indexer_score"] == ideal.hardware_components["indexer_score"]
    assert dense.total == ideal.total  # model FLOPs do not change
