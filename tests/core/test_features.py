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


def test_kv_shared_layers_double_wide_mlp_and_per_layer_embeddings():
    D, H, Hkv, hd, F, P, V, T, B, n, shared = 40, 4, 2, 6, 13, 5, 31, 9, 2, 5, 2
    cfg = maxflops.model_config(
        num_decoder_layers=n, emb_dim=D, num_query_heads=H, num_kv_heads=Hkv, head_dim=hd, mlp_dim=F,
        num_kv_shared_layers=shared, double_wide_kv_shared_mlp=True, per_layer_input_dim=P, vocab_size=V,
        max_target_length=T, per_device_batch_size=B)
    weight = lambda mats: sum(2 * a * b for a, b in mats)
    ple = [(D, P), (P, D)]
    own = [(D, H * hd), (D, Hkv * hd), (D, Hkv * hd), (H * hd, D), (D, F), (D, F), (F, D)] + ple
    reuse = [(D, H * hd), (H * hd, D), (D, 2 * F), (D, 2 * F), (2 * F, D)] + ple  # no K/V, double-wide MLP
    causal = _pairs(T, lambda i, j: j <= i)
    per_seq = ((n - shared) * weight(own) + shared * weight(reuse) + weight([(D, V), (D, n * P)])) * T \
        + n * 4 * H * hd * causal
    b = maxflops.count(cfg)
    assert b.total == 3 * B * per_seq
    assert b.components["per_layer_emb_proj"] == 3 * B * weight([(D, n * P)]) * T
    assert [row.name for row in b.layers if row.components.get("qkv_proj") == 3 * B * weight([(D, H * hd)]) * T] == \
        [f"layer {i}" for i in range(n - shared, n)]


def test_dilated_causal_conv_taps_against_enumeration():
    import numpy as np

    from maxflops import masks

    for kernel in (1, 2, 4):
        for dil in (1, 2, 3):
            for L in range(0, 30):
                brute = sum(1 for i in range(L) for t in range(kernel) if i - t * dil >= 0)
                assert masks.dilated_taps(L, kernel, dil) == brute, (L, kernel, dil)
            lengths = np.arange(0, 30)
            assert int(masks.dilated_taps(lengths, kernel, dil).sum()) == \
                sum(masks.dilated_taps(int(x), kernel, dil) for x in lengths)


def test_engram_and_mhc():
    D, G, heads, hdim, nmax, k, T, B, n = 12, 3, 2, 5, 3, 4, 10, 2, 3
    common = dict(num_decoder_layers=n, emb_dim=D, num_query_heads=2, num_kv_heads=2, head_dim=4, mlp_dim=7,
                  vocab_size=11, max_target_length=T, per_device_batch_size=B)
    base = maxflops.count(maxflops.model_config(**common))
    eng = maxflops.count(maxflops.model_config(
        **common, engram_layers=(0, 2), engram_num_heads=heads, engram_head_dim=hdim, engram_max_ngram_size=nmax,
        engram_kernel_size=k, mhc_expansion_rate=G), mode="prefill")
    e_in = heads * hdim * (nmax - 1)
    taps = sum(1 for i in range(T) for t in range(k) if i - t * nmax >= 0)  # dilation = the largest n-gram
    per_engram = B * (2 * e_in * G * D * T + 2 * e_in * D * T + 2 * G * D * T + 2 * G * D * taps)
    # one mHC mixing per token: [G*D] x [G*D, 2G+G^2], the G-way pre contraction, the G x G residual mixing
    per_mhc = B * T * (2 * G * D * (2 * G + G * G) + 2 * G * D + 2 * G * G * D)
    prefill = maxflops.count(maxflops.model_config(**common), mode="prefill")
    assert eng.total - prefill.total == 2 * per_engram + n * 2 * per_mhc
    assert eng.attention - prefill.attention == 2 * B * 2 * G * D * T  # the Engram gate: an activation product
    assert base.total == 3 * prefill.total
    full = maxflops.count(maxflops.model_config(**common, engram_layers=(1,), engram_num_heads=heads,
                                                engram_head_dim=hdim, engram_max_ngram_size=nmax,
                                                engram_kernel_size=k, gdn_conv_taps="full"), mode="prefill")
    assert full.components["engram_conv"] == B * 2 * D * k * T


def test_engram_decode_is_the_last_row_of_prefill():
    common = dict(num_decoder_layers=2, emb_dim=12, num_query_heads=2, num_kv_heads=2, head_dim=4, mlp_dim=7,
                  vocab_size=11, per_device_batch_size=1, engram_layers=(1,), engram_num_heads=2,
                  engram_head_dim=3, engram_max_ngram_size=3, engram_kernel_size=4, mhc_expansion_rate=2)
    cfg = maxflops.model_config(**common)
    for kv in range(0, 12):
        dec = maxflops.count(cfg, mode="decode", decode_kv_length=kv).components["engram_conv"]
        longer = maxflops.count(cfg, mode="prefill", max_target_length=kv + 1).components["engram_conv"]
        shorter = maxflops.count(cfg, mode="prefill", max_target_length=kv).components.get("engram_conv", 0) \
            if kv else 0
        assert dec == longer - shorter


def test_vision_encoder_frozen_and_trained():
    h, m, layers, patches, extra, pdim, images, B = 6, 10, 2, 9, 1, 12, 3, 2
    vision = dict(vision_layers=layers, vision_hidden_dim=h, vision_mlp_dim=m, vision_patches=patches,
                  vision_extra_tokens=extra, vision_patch_dim=pdim, vision_images=images,
                  vision_encoder_stages=("4:6:5",), vision_projector=("4:5:16",))
    cfg = maxflops.model_config(emb_dim=16, num_query_heads=2, num_kv_heads=2, head_dim=8, mlp_dim=8,
                                vocab_size=7, max_target_length=5, per_device_batch_size=B, **vision)
    S = patches + extra
    per_layer = [(h, h)] * 4 + [(h, m), (m, h)]
    encoder = 2 * patches * pdim * h + layers * sum(2 * S * a * b for a, b in per_layer) + 2 * 4 * 6 * 5
    attention = layers * 2 * (2 * h) * _pairs(S, lambda i, j: True)  # QK^T and PV over every pair
    projector = 2 * 4 * 5 * 16
    n = B * images
    frozen = maxflops.count(cfg)
    assert (frozen.components["vision_encoder"], frozen.components["vision_attention"],
            frozen.components["vision_projector"]) == (n * encoder, n * attention, 3 * n * projector)
    trained = maxflops.count(cfg, vision_frozen=False)
    assert trained.components["vision_encoder"] == 3 * n * encoder
    assert trained.attention - frozen.attention == 2 * n * attention
    assert maxflops.count(cfg, mode="prefill").components["vision_projector"] == n * projector
    assert "vision_encoder" not in maxflops.count(cfg, mode="decode", decode_kv_length=4).components


def test_gated_delta_net_and_mla_with_every_width_distinct():
    """Each width differs from the others, so a swapped pair of widths in a formula cannot pass."""
    D, nk, nv, dk, dv, ker, T, B = 20, 2, 3, 5, 7, 3, 6, 2
    gdn = maxflops.count(maxflops.model_config(
        num_decoder_layers=1, emb_dim=D, attention_layer_pattern="D", gdn_num_key_heads=nk, gdn_num_value_heads=nv,
        gdn_key_head_dim=dk, gdn_value_head_dim=dv, gdn_conv_kernel_dim=ker, mlp_dim=9, vocab_size=13,
        max_target_length=T, per_device_batch_size=B), mode="prefill").components
    # in: q, k (nk*dk each), v, z (nv*dv each), beta, a (nv each); out nv*dv -> D
    assert gdn["qkv_proj"] == B * T * 2 * D * (2 * nk * dk + 2 * nv * dv + 2 * nv)
    assert gdn["out_proj"] == B * T * 2 * nv * dv * D
    taps = sum(1 for i in range(T) for t in range(ker) if i - t >= 0)
    assert gdn["gdn_conv"] == B * 2 * (2 * nk * dk + nv * dv) * taps  # q, k, v channels
    assert gdn["core_attention"] == B * T * nv * 2 * (2 * dk * dv)  # S^T k and S^T q per value head

    H, qr, kvr, nope, rope, v = 3, 11, 13, 5, 4, 7
    mla = maxflops.count(maxflops.model_config(
        num_decoder_layers=1, emb_dim=D, attention_type="mla", num_query_heads=H, num_kv_heads=H, q_lora_rank=qr,
        kv_lora_rank=kvr, qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=v, mlp_dim=9, vocab_size=13,
        max_target_length=T, per_device_batch_size=B), mode="prefill").components
    weights = [(D, qr), (qr, H * (nope + rope)), (D, kvr + rope), (kvr, H * (nope + v))]
    assert mla["qkv_proj"] == B * T * sum(2 * a * b for a, b in weights)
    assert mla["out_proj"] == B * T * 2 * H * v * D
    assert mla["core_attention"] == B * 2 * H * (nope + rope + v) * _pairs(T, lambda i, j: j <= i)
