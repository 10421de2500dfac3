"""Hardware FLOPs (what kernels execute) against brute force and hand derivations."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import maxflops
from repo import quietly_inert
from maxflops.config import validate
from maxflops.conventions import convention_defined
from maxflops import masks
from brute import brute_tiles, mask_matrix

# every implementation knob is tried on every base, the bases without the layers it shapes included
# (the inert rule is held by tests/core/test_inert_keys.py)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")


@pytest.mark.parametrize("kind", ["global", "window", "chunk", "bidirectional"])
def test_blocked_tiles_match_enumeration(kind):
    for L in (1, 2, 7, 16, 33, 50):
        for span in (1, 3, 8, 20):
            for bq, bkv in ((1, 1), (4, 4), (3, 5), (8, 2), (16, 16)):
                assert masks.blocked(kind, span, L, bq, bkv) == brute_tiles(kind, L, span, bq, bkv), \
                    (kind, L, span, bq, bkv)


@pytest.mark.parametrize("kind", ["global", "window", "chunk"])
def test_blocked_decode_reads_the_last_row_rounded_to_tiles(kind):
    for kv in range(0, 40):
        for span, bkv in ((3, 4), (8, 5), (20, 8)):
            row = mask_matrix(kind, kv + 1, span)[kv]
            blocks = {j // bkv for j in np.nonzero(row)[0]}
            expect = sum(min((b + 1) * bkv, kv + 1) - b * bkv for b in blocks)
            assert masks.blocked_decode(kind, span, kv, bkv) == expect


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 4000), st.integers(1, 600), st.integers(1, 600))
def test_tiles_cover_the_mask_and_stay_inside_the_square(L, span, bq, bkv):
    for kind in ("global", "window", "chunk"):
        assert masks.pairs(kind, span, L) <= masks.blocked(kind, span, L, bq, bkv) <= L * L


SMALL = dict(model_name="hw", num_decoder_layers=2, emb_dim=64, vocab_size=500, num_query_heads=4,
             num_kv_heads=2, head_dim=8, mlp_dim=96, max_target_length=24, per_device_batch_size=2)
MLA = dict(SMALL, attention_type="mla", num_kv_heads=4, q_lora_rank=16, kv_lora_rank=12, qk_nope_head_dim=6,
           qk_rope_head_dim=4, v_head_dim=6, use_sparse_indexer=True, index_n_heads=2, index_head_dim=4,
           index_topk=5, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=16, shared_experts=1)


def hw(base, **kw):
    return maxflops.count(maxflops.model_config(**{**base, **kw}))


@pytest.mark.parametrize("base", [SMALL, MLA])
@pytest.mark.parametrize("mode", ["train", "prefill", "decode"])
def test_ideal_implementations_execute_the_model_flops(base, mode):
    b = hw(base, mode=mode, decode_kv_length=9)
    assert b.hardware_flops == b.total and dict(b.hardware_components) == dict(b.components)


def test_dense_attention_computes_the_full_square():
    L, B, H, hd, layers = 24, 2, 4, 8, 2
    ideal = hw(SMALL, mode="prefill")
    dense = hw(SMALL, mode="prefill", attention_impl="dense")
    per_pair = 2 * H * (hd + hd)
    extra = layers * B * per_pair * (L * L - L * (L + 1) // 2)
    assert dense.hardware_flops - ideal.hardware_flops == extra
    assert dense.total == ideal.total  # model FLOPs do not change


def test_remat_recomputes_every_layer_matmul_but_the_residual_tails():
    fwd = hw(MLA, mode="prefill")
    train = hw(MLA)
    remat = hw(MLA, remat_policy="full")
    layer_fwd = sum(r.hardware_flops for r in fwd.layers if r.group == "decoder")
    # Not recomputed: per layer (both MoE) and token, the shared expert's down projection (2*16*64), whose
    # output is only added into the layer output. The attention output feeds the FFN's norm and the routed
    # experts' outputs are scaled by router weights (needed for the router's gradient): both recomputed.
    tokens = 48
    tails = tokens * 2 * (2 * 16 * 64)
    assert remat.hardware_flops - train.hardware_flops == layer_fwd - tails


def test_flash_backward_recomputes_qk_once():
    # MLA per pair and head: QK^T 2*(6+4) = 20 FLOPs; DSA pairs min(i+1, 5) summed over 24 rows = 15 + 19*5.
    pairs = 15 + 19 * 5
    flash = hw(MLA, flash_backward_recompute=True)
    plain = hw(MLA)
    assert flash.hardware_flops - plain.hardware_flops == 2 * 2 * 4 * 20 * pairs  # 2 layers, batch 2, 4 heads


def test_moe_capacity_and_dense():
    tokens, E, k, D, F = 48, 4, 2, 64, 16
    ideal = hw(MLA, mode="prefill")
    cap = hw(MLA, mode="prefill", moe_impl="capacity", capacity_factor=1.3)
    dense = hw(MLA, mode="prefill", moe_impl="dense")
    slots = math.ceil(1.3 * 24 * k / E)  # per sequence of 24 tokens: 16 slots per expert (15.6 rounded up)
    per_slot = 6 * D * F
    routed = ideal.hardware_components["moe_routed"]
    assert routed == 2 * k * tokens * per_slot
    assert cap.hardware_components["moe_routed"] == 2 * 2 * E * slots * per_slot  # 2 layers, 2 sequences
    assert dense.hardware_components["moe_routed"] == 2 * E * tokens * per_slot


def test_dsa_gather_k_gathers_k_keys_for_early_queries_too():
    ideal = hw(MLA, mode="prefill")
    gather = hw(MLA, mode="prefill", dsa_impl="gather_k")
    per_pair, rows, K = 4 * (2 * 10 + 2 * 6), 24, 5
    missing = sum(K - min(i + 1, K) for i in range(rows))  # 4 + 3 + 2 + 1 = 10 padded keys per sequence
    assert gather.hardware_flops - ideal.hardware_flops == 2 * 2 * per_pair * missing


def test_absorbed_mla_per_pair_and_projections():
    # (MLA's indexer keys are inert without the indexer)
    base = quietly_inert(lambda: hw(MLA, mode="prefill", use_sparse_indexer=False, num_experts=1,
                                    num_experts_per_tok=1))
    absorbed = quietly_inert(lambda: hw(MLA, mode="prefill", use_sparse_indexer=False, num_experts=1,
                                        num_experts_per_tok=1, mla_absorbed=True))
    H, D, ql, kl, nope, rope, v, L, B = 4, 64, 16, 12, 6, 4, 6, 24, 2
    pairs = B * L * (L + 1) // 2
    core = 2 * (2 * H * (kl + rope) + 2 * H * kl) * pairs
    qkv = 2 * B * L * (2 * D * ql + 2 * ql * H * (nope + rope) + 2 * H * nope * kl + 2 * D * (kl + rope))
    out = 2 * B * L * (2 * H * kl * v + 2 * H * v * D)
    hc = absorbed.hardware_components
    assert (hc["core_attention"], hc["qkv_proj"], hc["out_proj"]) == (core, qkv, out)
    assert absorbed.total == base.total


def test_indexer_kl_loss_scores_are_hardware_only():
    b = hw(MLA, indexer_loss_scaling_factor=0.5)
    H, dqk, L, B = 4, 10, 24, 2
    assert b.hardware_components["indexer_kl"] == 2 * B * 2 * H * dqk * (L * (L + 1) // 2)
    assert "indexer_kl" not in b.components


@pytest.mark.parametrize("name", maxflops.available_models())
def test_model_never_exceeds_hardware(name):
    cfg = maxflops.load_config(name, max_target_length=4096)
    for kw in ({}, dict(attention_impl="blocked", attention_block_q=512, attention_block_kv=1024),
               dict(attention_impl="dense", remat_policy="full", flash_backward_recompute=True),
               dict(moe_impl="capacity", capacity_factor=1.0), dict(dsa_impl="gather_k"),
               dict(mode="decode", decode_kv_length=5000, attention_impl="blocked")):
        b = maxflops.count(cfg, **kw)
        assert b.total <= b.hardware_flops, kw


# (a model whose layers only the exact convention prices, MiniMax's lightning attention, has nothing to compare)
@pytest.mark.parametrize("name", [n for n in maxflops.available_models()
                                  if convention_defined(dict(maxflops.load_config(n)), "maxtext")
                                  or convention_defined(dict(maxflops.load_config(n)), "megatron_bridge")])
def test_hardware_flops_do_not_depend_on_the_reporting_convention(name):
    conventions = [c for c in ("exact", "maxtext", "megatron", "megatron_bridge")
                   if convention_defined(dict(maxflops.load_config(name)), c)]
    counts = [maxflops.count(maxflops.load_config(name, max_target_length=8192, convention=c, remat_policy="full"))
              for c in conventions]
    assert len(counts) >= 2
    assert len({b.hardware_flops for b in counts}) == 1
    assert len({tuple(b.hardware_components.items()) for b in counts}) == 1
    rows = {tuple(tuple(r.hardware_components.items()) for r in b.layers) for b in counts}
    assert len(rows) == 1


def test_vocab_padding_is_hardware_work_not_model_flops():
    b = maxflops.count(maxflops.model_config(vocab_size=32001, tensor_parallel_size=8, emb_dim=64))
    tokens = 2048
    assert b.components["logits"] == 3 * 2 * 64 * 32001 * tokens
    assert b.hardware_components["logits"] == 3 * 2 * 64 * 32008 * tokens  # padded to a multiple of 8
    m = maxflops.count(maxflops.model_config(vocab_size=32001, tensor_parallel_size=8, emb_dim=64,
                                             convention="megatron"))
    assert m.components["logits"] == 3 * 2 * 64 * 32768 * tokens  # Megatron: 32 x (128 x 8)


def test_blocked_tiles_vectorized_over_documents():
    lengths = np.array([1, 2, 7, 16, 33, 50, 64, 65], dtype=np.int64)
    for kind, span in (("global", 0), ("window", 5), ("chunk", 8), ("bidirectional", 0)):
        got = masks.blocked(kind, span, lengths, 8, 4)
        assert got.tolist() == [brute_tiles(kind, int(L), span, 8, 4) for L in lengths]


def test_absorbed_mla_with_a_narrow_latent_is_below_model_flops():
    """The README's claim, both ways: absorbed MLA computes attention in the kv latent; narrower than the heads'
    widths, it costs less than the model's form."""
    base = dict(num_decoder_layers=1, emb_dim=64, attention_type="mla", num_query_heads=4, num_kv_heads=4,
                q_lora_rank=0, qk_nope_head_dim=32, qk_rope_head_dim=8, v_head_dim=32, max_target_length=512,
                mode="prefill", mla_absorbed=True)
    narrow = maxflops.count(maxflops.model_config(**base, kv_lora_rank=4))
    wide = maxflops.count(maxflops.model_config(**base, kv_lora_rank=256))
    assert narrow.hardware_flops < narrow.total and wide.hardware_flops > wide.total


@pytest.mark.slow
def test_absurd_lengths_are_exact_not_wrapped():
    """Sums of L^2-sized terms past int64 are taken in Python ints: exact, never negative or wrapped."""
    n = 8_400_000  # row blocks of 512: L = 4,300,800,000 tokens
    cfg = maxflops.model_config(num_decoder_layers=1, num_query_heads=1, num_kv_heads=1, head_dim=1,
                                max_target_length=512 * n, mode="prefill")
    b = maxflops.count(cfg, attention_impl="blocked", attention_block_q=512, attention_block_kv=512)
    # causal, square tiles: row block i touches i + 1 key blocks of 512 x 512
    assert b.hardware_components["core_attention"] == 4 * 512 * 512 * n * (n + 1) // 2
    docs = maxflops.model_config(**{**cfg.to_dict(), "max_target_length": 2_000_000_000,
                                    "per_device_batch_size": 8, "convention_knobs_from": "exact"})
    eight = maxflops.count(docs, segment_lengths=[2_000_000_000] * 8)
    one = maxflops.count(docs, per_device_batch_size=1)
    assert eight.total == 8 * one.total > 0


def test_packed_rows_run_whole():
    """packed_kernel='row': the program runs every row whole (padding too, attention over the full row); model
    FLOPs still count the documents."""
    cfg = maxflops.load_config("llama3.1-8b", max_target_length=64, per_device_batch_size=2)
    docs = [30, 20, 64, 7]
    varlen = maxflops.count(cfg, segment_lengths=docs)
    row = maxflops.count(cfg, segment_lengths=docs, packed_kernel="row")
    padded = maxflops.count(cfg)
    assert row.total == varlen.total == sum(maxflops.count(cfg, [L]).total for L in docs)
    assert row.hardware_flops == padded.hardware_flops > varlen.hardware_flops


def test_chunked_gated_delta_net_and_its_conv_gradients_by_hand():
    """One gated-delta-net layer, T=10 in chunks of C=4 (3 chunks, the last padded), 2 key and 4 value heads of
    widths 6 and 10, a conv of 3 taps over 2*2*6 + 4*10 = 64 channels. Per chunk and value head the forward runs
    K_beta K^T, A K, Q K^T (2*C*C*6 each), A V and the masked scores times the new values (2*C*C*10 each), and
    against the state Q S, W S and K^T V (2*C*6*10 each). Training: two backward matmuls per forward one, plus the
    triangular solve's gradient, one C x C by C x C matmul per chunk and value head."""
    cfg = maxflops.model_config(model_name="gdn", num_decoder_layers=1, attention_layer_pattern="D", emb_dim=64,
                                vocab_size=100, num_query_heads=4, num_kv_heads=4, head_dim=16, mlp_dim=96,
                                gdn_num_key_heads=2, gdn_num_value_heads=4, gdn_key_head_dim=6,
                                gdn_value_head_dim=10, gdn_conv_kernel_dim=3, max_target_length=10,
                                gdn_impl="chunked", gdn_chunk_size=4)
    C, chunks, nv = 4, 3, 4
    forward = chunks * nv * (3 * 2 * C * C * 6 + 2 * 2 * C * C * 10 + 3 * 2 * C * 6 * 10)
    assert maxflops.count(cfg, mode="prefill").hardware_components["core_attention"] == forward
    train = maxflops.count(cfg).hardware_components
    assert train["core_attention"] == 3 * forward + chunks * nv * 2 * C ** 3
    # The conv: the forward reads the 1 + 2 + 3 * 8 = 27 valid taps per channel.
    conv = 2 * 64 * 27
    assert train["gdn_conv"] == 3 * conv
    pre_padded = maxflops.count(cfg, gdn_conv_impl="pre_padded").hardware_components["gdn_conv"]
    assert pre_padded == conv + 2 * 64 * 3 * 10 + conv  # input gradient: every tap of every token
    dense = maxflops.count(cfg, conv_weight_grad="dense").hardware_components["gdn_conv"]
    assert dense == conv + conv + 64 * conv  # weight gradient: every pair of channels


@pytest.mark.parametrize("bq, bkv", [(4, 4), (8, 3), (5, 7)])
def test_dsa_blocked_prices_every_visible_tile_of_the_dynamic_mask(bq, bkv):
    """dsa_impl='blocked' (splash with the top-k as a dynamic mask) takes every causally visible tile; checked against
    an enumeration of the tiles of the causal mask, and against the tiles of a random top-k mask (a lower bound)."""
    ideal = hw(MLA, mode="prefill")
    blocked = hw(MLA, mode="prefill", dsa_impl="blocked", attention_block_q=bq, attention_block_kv=bkv)
    per_pair, L, B, K = 4 * (2 * 10 + 2 * 6), 24, 2, 5
    tiles = brute_tiles("global", L, 0, bq, bkv)
    extra = 2 * B * per_pair * (tiles - sum(min(i + 1, K) for i in range(L)))  # two layers
    assert blocked.hardware_components["core_attention"] - ideal.hardware_components["core_attention"] == extra
    rng = np.random.default_rng(bq * 10 + bkv)
    topk = np.zeros((L, L), bool)
    for i in range(L):
        topk[i, rng.choice(i + 1, size=min(i + 1, K), replace=False)] = True
    touched = sum(topk[a:a + bq, b:b + bkv].size for a in range(0, L, bq) for b in range(0, L, bkv)
                  if topk[a:a + bq, b:b + bkv].any())
    assert touched <= tiles


def test_router_weights_on_the_expert_input():
    """moe_router_scale='input' (Llama 4): the routed experts' down projections (2 experts x 2*16*64 per token, two
    layers, 48 tokens) are only summed, so full remat skips them; the dense path's combine takes constant weights,
    so its backward is the one outer product (a matmul as issued, nothing once XLA drops it)."""
    moe = dict(SMALL, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=16)
    out = hw(moe, remat_policy="full").hardware_flops
    down = 2 * 2 * 16 * 64 * 48 * 2
    assert hw(moe, remat_policy="full", moe_router_scale="input").hardware_flops == out - down
    combine = 2 * 4 * 64 * 48 * 2  # 2*E*D per token, two layers
    dense = dict(moe, moe_impl="dense", moe_dispatch="einsum")
    for grads, backward in (("matmul", 1), ("elementwise", 0)):
        a = hw(dense, outer_product_grads=grads).hardware_components["moe_weighted_sum"]
        b = hw(dense, outer_product_grads=grads, moe_router_scale="input").hardware_components["moe_weighted_sum"]
        assert (a, b) == (combine * (3 - (1 - backward)), combine * (1 + backward))


def test_decode_capacity_dispatches_the_batchs_new_tokens_as_one_group():
    """In decode, moe_impl='capacity' dispatches the step's B new tokens as one group: each of E experts runs
    ceil(cf x B x k / E) slots (mixtral, B = 8: 2 slots), not B groups of one token (8 x 1 slots each)."""
    cfg = maxflops.load_config("mixtral-8x7b", mode="decode", per_device_batch_size=8, decode_kv_length=4096,
                               moe_impl="capacity", capacity_factor=1.0, capacity_rule="ceil")
    c = validate(cfg)
    D, F, E, k, n = c["emb_dim"], c["moe_mlp_dim"], c["num_experts"], c["num_experts_per_tok"], c["num_decoder_layers"]
    slots = -(-8 * k // E)
    assert slots == 2
    assert maxflops.count(cfg).hardware_components["moe_routed"] == n * E * slots * 2 * 3 * D * F
