"""Modes, packed sequences, gradient accumulation, MTP, the indexer's training rule, invariants."""

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import maxflops
from repo import quiet_config
from maxflops import cli

SMALL = dict(model_name="small", num_decoder_layers=4, emb_dim=64, vocab_size=1000, num_query_heads=4,
             num_kv_heads=2, head_dim=16, mlp_dim=128)
MLA_DSA = dict(SMALL, attention_type="mla", num_kv_heads=4, q_lora_rank=32, kv_lora_rank=24, qk_nope_head_dim=8,
               qk_rope_head_dim=4, v_head_dim=8, use_sparse_indexer=True, index_n_heads=2, index_head_dim=8,
               index_topk=5, index_topk_freq=2, index_skip_offset=1, num_experts=4, num_experts_per_tok=2,
               moe_mlp_dim=32, shared_experts=1, first_num_dense_layers=1, mtp_num_layers=1)
HYBRID = dict(SMALL, attention_layer_pattern="LCDG", sliding_window_size=5, chunk_attn_window_size=6,
              gdn_num_key_heads=2, gdn_num_value_heads=4, gdn_key_head_dim=8, gdn_value_head_dim=8,
              gdn_conv_kernel_dim=3, attention_output_gate=True)
SHAPES = {"dense": SMALL, "mla_dsa": MLA_DSA, "hybrid": HYBRID}


def count(shape, **kw):
    return maxflops.count(maxflops.model_config(**{**SHAPES[shape], **kw}))


@pytest.mark.parametrize("shape", SHAPES)
def test_decode_is_the_last_row_of_a_prefill(shape):
    # One decode step at KV length kv does exactly the work that a prefill of kv+1 tokens adds over a prefill
    # of kv tokens: the same projections for one token, the last row of every mask, one logits row.
    for kv in (1, 4, 5, 6, 11, 17):
        dec = count(shape, mode="decode", decode_kv_length=kv, max_target_length=64)
        longer = count(shape, mode="prefill", max_target_length=kv + 1)
        shorter = count(shape, mode="prefill", max_target_length=kv)
        assert dec.total == longer.total - shorter.total, kv
        assert dict(dec.components) == {k: longer.components[k] - shorter.components.get(k, 0)
                                        for k in longer.components}


@pytest.mark.parametrize("shape", SHAPES)
def test_packed_documents_are_separate_sequences(shape):
    # Packing restarts every mask at a document start: a packed batch costs the sum of its documents run alone.
    docs = [7, 1, 12, 30, 3]
    packed = maxflops.count(maxflops.model_config(**{**SHAPES[shape], "max_target_length": 32,
                                                     "per_device_batch_size": 2, "mode": "prefill"}),
                            segment_lengths=docs)
    alone = sum(count(shape, max_target_length=L, mode="prefill").total for L in docs)
    assert packed.total == alone
    assert packed.tokens == sum(docs)


@pytest.mark.parametrize("shape", SHAPES)
def test_uniform_packed_equals_padded_bshd(shape):
    cfg = maxflops.model_config(**{**SHAPES[shape], "max_target_length": 16, "per_device_batch_size": 3})
    assert maxflops.count(cfg, segment_lengths=[16, 16, 16]).to_dict() == maxflops.count(cfg).to_dict()
    assert maxflops.count(cfg, segment_lengths=np.array([16, 16, 16])).total == maxflops.count(cfg).total


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=12))
def test_thd_never_exceeds_padded_bshd(docs):
    cfg = maxflops.model_config(**{**MLA_DSA, "max_target_length": 40, "per_device_batch_size": len(docs)})
    assert maxflops.count(cfg, segment_lengths=docs).total <= maxflops.count(cfg).total


def test_packed_100k_documents_is_exact():
    rng = np.random.default_rng(1)
    docs = rng.integers(1, 4097, size=100_000)
    cfg = maxflops.load_config("glm5", max_target_length=4096, per_device_batch_size=int(docs.sum()) // 4096 + 1)
    b = maxflops.count(cfg, segment_lengths=docs)
    # DSA core pairs by another route: sum over documents of sum_i min(i+1, K), via a histogram of lengths.
    K = 2048
    per_len = np.concatenate([[0], np.cumsum(np.minimum(np.arange(1, 4097), K))])
    pairs = int(per_len[docs].sum())
    h, dqk, dv = 64, 192 + 64, 256
    # 78 decoder layers (the MTP module's share is in the "mtp" component).
    assert b.components["core_attention"] == 3 * 2 * h * (dqk + dv) * pairs * 78
    assert b.tokens == int(docs.sum())


@pytest.mark.parametrize("shape", SHAPES)
def test_gradient_accumulation_multiplies_the_step(shape):
    one = count(shape, max_target_length=24)
    four = count(shape, max_target_length=24, gradient_accumulation_steps=4)
    assert four.total == 4 * one.total and four.tokens == 4 * one.tokens
    assert dict(four.components) == {k: 4 * v for k, v in one.components.items()}


def test_train_is_three_forwards_without_indexer_and_mtp():
    for shape in ("dense", "hybrid"):
        train = count(shape, max_target_length=20)
        prefill = count(shape, max_target_length=20, mode="prefill")
        assert train.total == 3 * prefill.total


def test_indexer_training_rule():
    base = dict(MLA_DSA, mtp_num_layers=0, max_target_length=20)
    fwd = count("mla_dsa", **{**base, "mode": "prefill"}).components
    frozen = count("mla_dsa", **base).components
    trained = count("mla_dsa", **base, indexer_loss_scaling_factor=0.1).components
    # No indexer loss: the detached indexer gets no gradient, forward only.
    assert frozen["indexer_proj"] == fwd["indexer_proj"] and frozen["indexer_score"] == fwd["indexer_score"]
    # With the loss: projections see detached inputs (forward + weight gradient), scoring is 3x.
    assert trained["indexer_proj"] == 2 * fwd["indexer_proj"]
    assert trained["indexer_score"] == 3 * fwd["indexer_score"]
    assert trained["qkv_proj"] == frozen["qkv_proj"] == 3 * fwd["qkv_proj"]


def test_mtp_module_costs_eh_projection_a_layer_and_its_logits():
    # Hand-derived for MLA_DSA at T=20 (train, MTP copies the last decoder layer: DSA + MoE, own index).
    T, D, V = 20, 64, 1000
    with_mtp = count("mla_dsa", max_target_length=T)
    without = count("mla_dsa", max_target_length=T, mtp_num_layers=0)
    last = [r for r in with_mtp.layers if r.name == "layer 3"][0]
    mtp_row = [r for r in with_mtp.layers if r.group == "mtp"][0]
    eh = 3 * 2 * (2 * D) * D * T
    logits = 3 * 2 * D * V * T
    # Layer 3 (1-based 4) reuses its index under freq 2 offset 1; MTP 1 computes its own, so add the indexer.
    idx_proj = 1 * 2 * (32 * 2 * 8 + D * 8 + D * 2) * T
    idx_score = 1 * (2 * 2 * 8 + 2 * 2) * (T * (T + 1) // 2)
    assert not last.computes_index and mtp_row.computes_index
    assert mtp_row.total == last.total + eh + logits + idx_proj + idx_score
    assert with_mtp.total - without.total == mtp_row.total == with_mtp.components["mtp"]
    # MTP is a training objective only.
    assert count("mla_dsa", max_target_length=T, mode="prefill").components.get("mtp", 0) == 0


def test_fractional_batch_is_a_per_device_average():
    half = count("dense", per_device_batch_size=0.5, max_target_length=64)
    two = count("dense", per_device_batch_size=2, max_target_length=64)
    assert half.total * 4 == two.total
    assert half.tokens == 32


def test_bidirectional_attention_counts_the_full_square():
    enc = count("dense", causal=False, max_target_length=10, mode="prefill")
    dec = count("dense", max_target_length=10, mode="prefill")
    per_pair = 2 * 4 * (16 + 16)
    assert enc.components["core_attention"] - dec.components["core_attention"] == 4 * per_pair * (100 - 55)


def test_decode_with_ragged_cache_lengths():
    cfg = maxflops.model_config(**{**SMALL, "mode": "decode", "per_device_batch_size": 3})
    ragged = maxflops.count(cfg, segment_lengths=[5, 0, 9])
    parts = [maxflops.count(maxflops.model_config(**{**SMALL, "mode": "decode", "decode_kv_length": kv}))
             for kv in (5, 0, 9)]
    assert ragged.total == sum(p.total for p in parts) and ragged.tokens == 3


def test_breakdown_is_immutable_and_serializable():
    b = count("mla_dsa", max_target_length=16)
    with pytest.raises(TypeError):
        b.components["logits"] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.learnable_weight = 1
    d = json.loads(json.dumps(b.to_dict()))
    assert d["total"] == b.total == d["learnable_weight"] + d["attention"]
    assert all(isinstance(v, int) for v in b.components.values())


def test_maxtext_style_entry_point_prints_the_maxtext_line(capsys):
    cfg = maxflops.load_config("deepseek2-16b", per_device_batch_size=4, max_target_length=8192, convention="maxtext")
    total, learnable, attention = maxflops.calculate_tflops_training_per_device(cfg, log=True)
    out = capsys.readouterr().out
    assert "Per train step:" in out and "Total TFLOPs: 593.27" in out
    assert "split as 81.24% learnable weight flops and 18.76% attention flops" in out
    assert total == pytest.approx(learnable + attention, rel=1e-15)


def test_import_does_not_pull_jax_numpy_or_ml_collections():
    code = "import sys, maxflops; print(sorted(m for m in ('jax', 'numpy', 'ml_collections') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_cli_default_report_and_json(capsys):
    assert cli.main(["maxflops"]) == 0
    text = capsys.readouterr().out
    assert "deepseek3.2-671b" in text and "Total TFLOPs per device per step" in text and "indexer_score" in text
    assert cli.main(["maxflops", "--model=glm5", "--config.max_target_length=4096", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    b = maxflops.count(maxflops.load_config("glm5", max_target_length=4096))
    assert d["total"] == b.total and d["config"]["max_target_length"] == 4096


def test_dsa_warmup_stage_by_hand():
    """The dense warm-up stage: the main model is frozen (forward only), the output head is skipped, and only
    the indexer trains through its KL loss. Derived here from MLA_DSA's weight shapes (T=20, no MTP): per token,
    q/kv 2*(64*32 + 32*4*12 + 64*28 + 24*4*16), out 2*4*8*64, dense MLP 2*3*64*128, router 2*64*4, two routed
    experts 2*2*3*64*32 and one shared 2*3*64*32; 90 top-k pairs (sum of min(i+1, 5)) at 2*4*(12+8) each; the
    indexer (layers 1 and 3 compute it) 2*(32*2*8 + 64*8 + 64*2) per token and 2*2*8 + 2*2 per scored pair (210)."""
    T = 20
    base = dict(MLA_DSA, mtp_num_layers=0, max_target_length=T, indexer_loss_scaling_factor=0.1,
                indexer_stage="warmup")
    qkv, out, mlp, moe = 2 * 6912, 2 * 2048, 2 * 3 * 64 * 128, 2 * 64 * 4 + 2 * 2 * 3 * 64 * 32 + 2 * 3 * 64 * 32
    core, idx_proj, idx_score, kl = 2 * 4 * 20 * 90, 2 * 1152 * T, 36 * 210, 2 * 4 * 12 * 210
    frozen = T * (4 * (qkv + out) + mlp + 3 * moe) + 4 * core
    b = count("mla_dsa", **base)
    assert b.total == frozen + 2 * (2 * idx_proj + 3 * idx_score)
    assert b.components["logits"] == 0
    # Hardware adds the KL loss's target (the main q.k scores over the indexer's pairs) in each indexing layer,
    # and under full remat recomputes, in those layers only, what the indexer's gradient needs.
    assert b.hardware_flops == b.total + 2 * kl
    remat = count("mla_dsa", **base, remat_policy="full").hardware_flops
    assert remat == b.total + 2 * kl + 2 * (qkv * T + idx_proj + idx_score + kl)
    # Without the KL loss nothing trains: the step computes nothing. Prefill ignores the stage.
    assert count("mla_dsa", **{**base, "indexer_loss_scaling_factor": 0.0}).hardware_flops == 0
    assert count("mla_dsa", **base, mode="prefill").total == count("mla_dsa", **{**base, "mode": "prefill",
                                                                                  "indexer_stage": "sparse"}).total
    # Peer conventions price the sparse stage whatever the stage.
    assert count("mla_dsa", **base, convention="maxtext").total == \
        count("mla_dsa", **{**base, "indexer_stage": "sparse"}, convention="maxtext").total


def test_warmup_needs_the_indexer():
    with pytest.raises(ValueError, match="indexer_stage.*use_sparse_indexer"):
        count("dense", indexer_stage="warmup")


def test_remat_skip_layers_leaves_the_first_layers_unrematerialized():
    """Four identical layers: skipping remat on two of them costs exactly half of what full remat adds."""
    cfg = maxflops.model_config(**SMALL, max_target_length=24)
    full = maxflops.count(cfg, remat_policy="full").hardware_flops
    none = maxflops.count(cfg, remat_policy="none").hardware_flops
    assert full > none
    assert 2 * maxflops.count(cfg, remat_policy="full", remat_skip_layers=2).hardware_flops == full + none
    assert maxflops.count(cfg, remat_policy="full", remat_skip_layers=4).hardware_flops == none
    assert maxflops.count(cfg, remat_policy="full", remat_skip_layers=2).total == maxflops.count(cfg).total


def test_remat_block_layers_recompute_the_tail_inside_a_unit():
    """Units of two layers: the first layer's output feeds the second inside the unit, so its FFN down projection
    (2*64*128 per token, the tail a one-layer unit skips) is recomputed too; the last layer closes a unit."""
    cfg = maxflops.model_config(**SMALL, max_target_length=24)
    one = maxflops.count(cfg, remat_policy="full").hardware_flops
    down = 2 * 64 * 128 * 24
    assert maxflops.count(cfg, remat_policy="full", remat_block_layers=2).hardware_flops == one + 2 * down
    assert maxflops.count(cfg, remat_policy="full", remat_block_layers=4).hardware_flops == one + 3 * down
    # after one unrematerialized layer: units (1, 2) and (3), which is the last layer
    skip = maxflops.count(cfg, remat_policy="full", remat_skip_layers=1).hardware_flops
    assert maxflops.count(cfg, remat_policy="full", remat_skip_layers=1, remat_block_layers=2).hardware_flops == \
        skip + down


def test_normed_projections_are_recomputed_even_when_saved():
    """q and k normed after their projections (qkv_norms='qk'): a policy that saves q, k and v still recomputes
    those projections, 2*64*64 and 2*64*32 per token in each of the four layers; 'qkv' adds v's 2*64*32."""
    cfg = maxflops.model_config(**SMALL, max_target_length=24)
    saved = maxflops.count(cfg, remat_policy="save_qkv_proj").hardware_flops
    q, kv = 2 * 64 * 64 * 24, 2 * 64 * 32 * 24
    assert maxflops.count(cfg, remat_policy="save_qkv_proj", qkv_norms="qk").hardware_flops == saved + 4 * (q + kv)
    assert maxflops.count(cfg, remat_policy="save_qkv_proj", qkv_norms="qkv").hardware_flops == \
        saved + 4 * (q + 2 * kv)
    assert maxflops.count(cfg, remat_policy="full", qkv_norms="qkv").hardware_flops == \
        maxflops.count(cfg, remat_policy="full").hardware_flops


def test_warmup_edges_and_remat_unit_checks():
    """The warm-up stage's frozen attention has no backward, so flash's recompute of QK^T does not run; the remat
    keys are checked against the layer count."""
    base = dict(MLA_DSA, mtp_num_layers=0, max_target_length=20, indexer_stage="warmup")
    kl = count("mla_dsa", **base, indexer_loss_scaling_factor=0.1, flash_backward_recompute=True)
    fwd = count("mla_dsa", **{**base, "mode": "prefill"})
    assert kl.hardware_components["core_attention"] == fwd.hardware_components["core_attention"]
    assert count("mla_dsa", **base, flash_backward_recompute=True).hardware_flops == 0
    with pytest.raises(ValueError, match="remat_skip_layers.*exceeds"):
        count("dense", remat_skip_layers=5)
    with pytest.raises(ValueError, match="remat_block_layers.*exceeds"):
        count("dense", remat_skip_layers=1, remat_block_layers=4)
    traffic = maxflops.decode_traffic(maxflops.model_config(**SMALL), convention="maxtext")
    assert traffic.total == maxflops.decode_traffic(maxflops.model_config(**SMALL)).total


def test_report_groups_hybrid_mtp_layers_by_module():
    """A hybrid's MTP modules hold several layers ('mtp 1.2': module 1, its layer 2); the report's row groups run
    within a module (the report used to fail on them: Nemotron-3 Super's was the first shipped config with one)."""
    from maxflops.report import _ranges, text_report

    assert _ranges(["0", "1", "2", "7"]) == "0-2,7"
    assert _ranges(["1.1", "1.2", "2.1", "2.2", "3.2"]) == "1.1-2,2.1-2,3.2"
    cfg = maxflops.load_config("nemotron-3-super-120b-a12b", mtp_num_layers=2)
    text = text_report(maxflops.count(cfg), cfg)
    assert "mtp 1.1,2.1 " in text and "mtp 1.2,2.2 " in text and "latent MoE FFN" in text


def test_a_sparse_indexer_loss_backpropagates_the_selected_pairs_only():
    """indexer_loss_pairs='selected' (Megatron's dsa_indexer_use_sparse_loss): the scores' forward covers every causal
    pair (to select), their backward and the loss's target only the top-k pairs, counted here by enumeration; a
    program's target covers the selected pairs, its scores' backward every pair (the Flax model: tests/xla)."""
    L, K, n, hd, H = 37, 5, 3, 7, 4
    kw = dict(num_decoder_layers=2, attention_type="mla", attention_layer_pattern="G", emb_dim=48, vocab_size=50,
              num_query_heads=H, num_kv_heads=H, q_lora_rank=16, kv_lora_rank=12, qk_nope_head_dim=6,
              qk_rope_head_dim=4, v_head_dim=6, use_sparse_indexer=True, index_topk=K, index_n_heads=n,
              index_head_dim=hd, mode="train", max_target_length=L, indexer_loss_scaling_factor=0.01,
              indexer_kl_flops=True)
    every = sum(i + 1 for i in range(L))  # the causal pairs the indexer scores
    selected = sum(min(i + 1, K) for i in range(L))  # the top-k pairs each query keeps
    dense = maxflops.count(maxflops.model_config(**kw))
    sparse = maxflops.count(maxflops.model_config(**kw, indexer_loss_pairs="selected"))
    per_pair = 2 * n * hd + 2 * n  # q.k per indexer head and the weighted sum over heads
    assert dense.components["indexer_score"] - sparse.components["indexer_score"] == \
        2 * per_pair * (every - selected) * 2  # two backward matmuls' worth, in both layers
    assert dense.components["indexer_kl"] - sparse.components["indexer_kl"] == 2 * H * (6 + 4) * (every - selected) * 2
    # hardware: the target over the gathered selected keys; the scores' backward dense (a gather's gradient scatters)
    assert dense.hardware_components["indexer_kl"] - sparse.hardware_components["indexer_kl"] == \
        2 * H * (6 + 4) * (every - selected) * 2
    assert dense.hardware_components["indexer_score"] == sparse.hardware_components["indexer_score"]
    assert {k: v for k, v in dense.components.items() if not k.startswith("indexer_")} == \
        {k: v for k, v in sparse.components.items() if not k.startswith("indexer_")}


@pytest.mark.parametrize("absorbed", [False, True])
@pytest.mark.parametrize("mode", ["prefill", "train", "decode"])
def test_an_output_gate_on_mla_is_one_projection_per_value_channel(absorbed, mode):
    """attention_output_gate on MLA (Kimi K3's g_proj): a D -> heads x v_head_dim projection, its sigmoid gating the
    attention output; model and hardware FLOPs grow by exactly that matmul, whatever the kernel."""
    kw = dict(attention_type="mla", num_decoder_layers=2, emb_dim=24, num_query_heads=3, num_kv_heads=3,
              q_lora_rank=10, kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=2, v_head_dim=5, mlp_dim=16,
              vocab_size=32, max_target_length=9, per_device_batch_size=2, decode_kv_length=6, mode=mode,
              mla_absorbed=absorbed)
    gated = maxflops.count(quiet_config(**kw, attention_output_gate=True))
    plain = maxflops.count(quiet_config(**kw))
    tokens = 2 if mode == "decode" else 18
    extra = 2 * 24 * 3 * 5 * tokens * 2 * (3 if mode == "train" else 1)
    assert gated.total - plain.total == extra and gated.hardware_flops - plain.hardware_flops == extra
