"""The Flax decoder built from every shipped config: analytic hardware FLOPs == XLA's loop-aware matmul count.

XLA's count is taken on the lowered (pre-optimization) module, which holds exactly the matmuls the program
issues, every ``nn.scan`` body multiplied by its trip count. (The optimized CPU module rewrites dots with a
contracting dimension of 1 into multiplies, e.g. the first query row's PV under ``attention_impl='ideal'``.)
"""

import jax
import pytest

import maxflops
from maxflops.xla import model as M
from maxflops.xla.cli import scopes
from maxflops.xla.hlo import count_lowered

pytestmark = pytest.mark.slow

SCOPES = scopes()  # every declared matmul component; a dot goes to its innermost named scope


def by_component(b):
    return b.by_kind(hardware=True)


def assert_equal_by_component(b, model, params, tokens, mode):
    """XLA's count of the step equals the engine's hardware FLOPs, in total and by component (every dot in a declared
    scope)."""
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    xla = count_lowered(fn, *args)
    assert b.hardware_flops == xla.matmul_flops
    scoped = xla.by_scope(SCOPES, innermost=True)
    assert scoped.pop("other") == 0
    assert {k: v for k, v in scoped.items() if v} == by_component(b)


def xla_and_analytic(name, mode, **knobs):
    c, model, params, tokens = M.build(maxflops.load_config(name), abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    xla = count_lowered(fn, *args)
    return b, xla


@pytest.mark.parametrize("mode", ["prefill", "train"])
@pytest.mark.parametrize("name", maxflops.available_models())
def test_every_config_model_equals_hardware_equals_xla(name, mode):
    b, xla = xla_and_analytic(name, mode)
    assert b.total == b.hardware_flops == xla.matmul_flops
    scoped = xla.by_scope(SCOPES, innermost=True)
    assert scoped.pop("other") == 0
    assert {k: v for k, v in scoped.items() if v} == by_component(b)


KNOBS = [
    ("gemma3-27b", dict(attention_impl="dense")),
    ("gemma3-27b", dict(attention_impl="blocked", attention_block_q=4, attention_block_kv=3,
                        flash_backward_recompute=True)),
    ("llama4-17b-128e", dict(attention_impl="blocked", attention_block_q=3, attention_block_kv=4)),
    ("gpt-oss-120b", dict(moe_impl="capacity", capacity_factor=1.25)),
    ("mixtral-8x7b", dict(moe_impl="dense", remat_policy="full")),
    ("deepseek2-16b", dict(mla_absorbed=True, moe_impl="capacity", capacity_factor=1.5)),
    ("deepseek3-671b", dict(moe_impl="capacity", capacity_factor=0.5)),
    ("deepseek3.2-671b", dict(indexer_loss_scaling_factor=0.1, attention_impl="blocked")),
    ("glm5", dict(mla_absorbed=True, remat_policy="full", indexer_loss_scaling_factor=0.01)),
    ("glm5", dict(dsa_impl="gather_k", attention_impl="dense")),
    ("qwen3-next-80b-a3b", dict(remat_policy="full", flash_backward_recompute=True)),
    ("llama3.1-8b", dict(causal=False, attention_impl="blocked")),
    # a scalar gate per query head (LFM3); ModernBERT's prediction head before the output head
    ("llama3.1-8b", dict(attention_head_gate=True, head_dense=True)),
    ("qwen3-next-80b-a3b", dict(attention_head_gate=True, remat_policy="full")),
    # DeepSeek-V4: the dense forms MaxText's dot_product and transformers' eager run; the tiles; the indexer's loss;
    # weighted sums as a multiply and a sum; remat with flash's recompute
    ("deepseek4-284b", dict(attention_impl="dense", dsa_impl="dense")),
    ("deepseek4-284b", dict(attention_impl="blocked", attention_block_q=4, attention_block_kv=2, dsa_impl="gather_k",
                            indexer_loss_scaling_factor=0.1)),
    ("deepseek4-284b", dict(weighted_sum_impl="elementwise", remat_policy="full", flash_backward_recompute=True)),
    ("deepseek4-284b", dict(use_sparse_indexer=False, attention_impl="blocked", attention_block_q=3,
                            attention_block_kv=2)),
]


@pytest.mark.parametrize("name,knobs", KNOBS, ids=[f"{n}-{'-'.join(k)}" for n, k in KNOBS])
def test_implementation_knobs_hardware_equals_xla_train(name, knobs):
    b, xla = xla_and_analytic(name, "train", **knobs)
    assert b.hardware_flops == xla.matmul_flops
    scoped = xla.by_scope(SCOPES, innermost=True)
    assert {k: v for k, v in scoped.items() if v} == by_component(b)
    if knobs.get("capacity_factor", 1) >= 1:  # a capacity below 1 drops tokens: less work than the model's
        assert b.total <= b.hardware_flops


def test_remat_adds_the_recompute_on_the_lowered_module_and_the_jaxpr():
    from maxflops.xla.jaxpr_count import count_jaxpr

    counts = {}
    for policy in ("none", "full"):
        c, model, params, tokens = M.build(maxflops.load_config("llama3.1-8b"), abstract=True, mode="train",
                                           remat_policy=policy)
        step, opt = M.train_step_fn(model)
        state = jax.eval_shape(opt.init, params)
        hlo = count_lowered(step, params, state, tokens).matmul_flops
        assert count_jaxpr(step, params, state, tokens) == hlo
        assert maxflops.count(c).hardware_flops == hlo
        counts[policy] = hlo
    # The recompute: one more forward of every layer matmul except the dense FFN's down projection.
    reduced = M.reduce_config(maxflops.load_config("llama3.1-8b"), mode="prefill")
    layers = sum(r.hardware_flops for r in maxflops.count(reduced).layers if r.group == "decoder")
    down = reduced["num_decoder_layers"] * 2 * 48 * 32 * 26  # F=48 -> D=32 over 2 x 13 tokens
    assert counts["full"] - counts["none"] == layers - down


def test_xla_cli_reports_equality(capsys):
    from maxflops.xla import cli

    assert cli.main(["maxflops.xla", "--model=llama2-7b", "--config.attention_impl=blocked"]) == 0
    out = capsys.readouterr().out
    assert out.count("analytic hardware == XLA      yes") == 2 and "cost_analysis" in out
    assert cli.main(["maxflops.xla", "--model=llama2-7b", "--config.attention_impl=tiled"]) == 2


ALL_KNOBS = {
    "tiled": dict(attention_impl="blocked", flash_backward_recompute=True, mla_absorbed=True, moe_impl="capacity",
                  capacity_factor=1.25, dsa_impl="gather_k", remat_policy="full", indexer_loss_scaling_factor=0.1),
    "dense": dict(attention_impl="dense", moe_impl="dense"),
}


@pytest.mark.parametrize("knobs", ALL_KNOBS, ids=list(ALL_KNOBS))
@pytest.mark.parametrize("name", maxflops.available_models())
def test_every_config_with_every_knob_hardware_equals_xla(name, knobs):
    knobs = dict(ALL_KNOBS[knobs])
    if "B" in maxflops.load_config(name).attention_layer_pattern:  # MiniMax sparse attention: its indexer trains
        knobs.pop("indexer_loss_scaling_factor", None)  # through no loss (a KL loss on it is refused by name)
    b, xla = xla_and_analytic(name, "train", **knobs)
    assert b.hardware_flops == xla.matmul_flops
    assert b.total <= b.hardware_flops


PACKED = [("llama3.1-8b", {}), ("gemma3-27b", {}), ("llama4-17b-128e", {}), ("mixtral-8x7b", dict(moe_impl="dense")),
          ("gpt-oss-120b", dict(attention_impl="blocked")),
          ("llama3.1-8b", dict(attention_impl="dense", remat_policy="full")),
          # DSA with index reuse and MTP, DSA with its KL loss, the gated delta net, DeepSeek-V4 (a 1-token document
          # forms no block)
          ("glm5", {}), ("deepseek3.2-671b", dict(indexer_loss_scaling_factor=0.1)), ("qwen3-next-80b-a3b", {}),
          ("deepseek4-284b", {}), ("deepseek4-284b", dict(attention_impl="dense", dsa_impl="dense"))]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["prefill", "train"])
@pytest.mark.parametrize("name,knobs", PACKED, ids=[f"{n}-{'-'.join(k) or 'ideal'}" for n, k in PACKED])
def test_packed_documents_equal_xla(name, knobs, mode):
    """Packed documents (one THD row of 5 + 13 + 1 + 7 tokens, each attended on its own, as a varlen kernel
    does): the engine's count with the same segment_lengths equals XLA's, and differs from the padded batch."""
    docs = (5, 13, 1, 7)
    c, model, params, tokens = M.build(maxflops.load_config(name), abstract=True, mode=mode, segment_lengths=docs,
                                       **knobs)
    b = maxflops.count(c, segment_lengths=list(docs))
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    xla = count_lowered(fn, *args)
    assert b.hardware_flops == xla.matmul_flops
    assert b.total != maxflops.count(c).total  # 26 tokens in four documents, not two rows of 13


# a hybrid (Mamba-2, attention, MLP and MoE blocks) with two MTP modules of two blocks each (Megatron's pattern
# after '/', NemotronH's mtp_layers_block_type): no shipped config has one
HYBRID_MTP = dict(num_decoder_layers=4, attention_layer_pattern="M-G-", ffn_layer_pattern="-F-E", emb_dim=32,
                  vocab_size=64, mlp_dim=48, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=16, num_query_heads=4,
                  num_kv_heads=2, head_dim=8, mamba_num_heads=4, mamba_head_dim=8, mamba_n_groups=2,
                  mamba_state_dim=8, mtp_num_layers=2, mtp_layer_pattern="G-", mtp_ffn_layer_pattern="-E")


@pytest.mark.parametrize("knobs", [{}, dict(remat_policy="full"), dict(mamba_impl="chunked", mamba_chunk_size=4)],
                         ids=["ideal", "remat", "chunked"])
def test_hybrid_mtp_modules_equal_xla(knobs):
    c, model, params, tokens = M.build(maxflops.model_config(**HYBRID_MTP), abstract=True, mode="train", **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, "train", abstract=True)
    xla = count_lowered(fn, *args)
    assert b.hardware_flops == xla.matmul_flops
    if not knobs:
        assert b.total == b.hardware_flops
    depths = c["mtp_num_layers"]  # (the reduced model keeps one)
    assert depths and [r.name for r in b.layers if r.group == "mtp"] == [f"mtp {k}.{j}" for k in range(1, depths + 1)
                                                                         for j in (1, 2)]


@pytest.mark.parametrize("dead", ["eliminated", "forward"])
@pytest.mark.parametrize("mode,length", [("prefill", 2), ("train", 2), ("train", 4), ("train", 5)])
def test_compressors_that_form_no_block_equal_xla(dead, mode, length):
    """DeepSeek-V4 (reduced: CSA ratio 3, HCA ratio 5) below both ratios, between them and at the HCA ratio: no
    block forms, nothing reads the compressor. Dropped (the layer as written: jax's lowering removes the dead
    projections) or kept forward only (its result added as a detached zero, as an eager program runs it): the engine's
    dead_compressor equals XLA's count either way, component by component."""
    b, xla = xla_and_analytic("deepseek4-284b", mode, max_target_length=length, dead_compressor=dead)
    assert b.hardware_flops == xla.matmul_flops
    scoped = xla.by_scope(SCOPES, innermost=True)
    assert {k: v for k, v in scoped.items() if v} == {k: v for k, v in by_component(b).items() if v}
    assert ("compressor" in scoped and scoped["compressor"] > 0) == (length >= 3 or dead == "forward")


# layers of their own widths (layer_widths): FFN widths, KV heads, query heads and head widths per layer, beside
# windows, MoE layers with their own expert width, a layer without a mixer; reduced to distinct small widths
WIDTHS = dict(num_decoder_layers=7, emb_dim=64, mlp_dim=96, num_query_heads=8, num_kv_heads=2, head_dim=16,
              vocab_size=500, attention_layer_pattern="GGL-GGL", sliding_window_size=9, num_experts=4,
              num_experts_per_tok=2, moe_mlp_dim=32, ffn_layer_pattern="FEFFEFF",
              layer_widths=("mlp_dim@0+3=200", "num_kv_heads@1=8", "moe_mlp_dim@4=48", "head_dim@2=24",
                            "num_query_heads@5=4", "num_kv_heads@5=1", "mlp_dim@6=40"))


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(attention_impl="blocked"))],
                         ids=["prefill", "train", "remat", "blocked"])
def test_layers_of_their_own_widths_equal_xla(mode, knobs):
    c, model, params, tokens = M.build(maxflops.model_config(**WIDTHS), abstract=True, mode=mode, **knobs)
    assert len(c["layer_widths"]) >= 6  # the reduction keeps the layers' widths apart
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
    plain = maxflops.count(c, layer_widths=())
    assert plain.hardware_flops != b.hardware_flops


# MLA layers of their own widths (Dots 3 Note's windowed layers: heads, q and kv latents, nope / rope / v widths) beside
# DSA-indexed ones, every layer with a sigmoid gate per head, MoE after a dense layer
MLA_WIDTHS = dict(num_decoder_layers=4, emb_dim=64, mlp_dim=96, num_query_heads=8, num_kv_heads=8, vocab_size=500,
                  attention_type="mla", q_lora_rank=32, kv_lora_rank=24, qk_nope_head_dim=16, qk_rope_head_dim=8,
                  v_head_dim=16, use_sparse_indexer=True, index_n_heads=2, index_head_dim=8, index_topk=4,
                  attention_layer_pattern="GGLL", sliding_window_size=5, attention_head_gate=True, num_experts=4,
                  num_experts_per_tok=2, moe_mlp_dim=32, shared_experts=1, first_num_dense_layers=1,
                  layer_widths=("num_query_heads@2-3=4", "q_lora_rank@2-3=20", "kv_lora_rank@2-3=28",
                                "qk_nope_head_dim@2-3=12", "v_head_dim@2-3=8", "qk_rope_head_dim@2-3=4"))


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(mla_absorbed=True))],
                         ids=["prefill", "train", "remat", "absorbed"])
def test_mla_layers_of_their_own_widths_with_head_gates_equal_xla(mode, knobs):
    c, model, params, tokens = M.build(maxflops.model_config(**MLA_WIDTHS), abstract=True, mode=mode, **knobs)
    assert {r.partition("@")[0] for r in c["layer_widths"]} >= {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim"}
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs,loops", [
    ("prefill", {}, ("1-2*3",)), ("train", {}, ("1-2*3",)), ("train", dict(remat_policy="full"), ("1-2*3",)),
    ("train", {}, ("0-1*4/2", "2-3*2")), ("train", dict(remat_policy="full"), ("0-1*3/1",))],
    ids=["prefill", "train", "remat", "no-grad", "no-grad-remat"])
def test_looped_layers_equal_xla(mode, knobs, loops):
    """Looped depth (layer_loops, Dory's recurrent section; HRM's passes without a gradient): the Flax model runs
    each pass (its own parameters: the sharing changes no FLOPs), a pass without a gradient under stop_gradient; XLA
    equal to the engine."""
    cfg = maxflops.model_config(num_decoder_layers=4, emb_dim=64, mlp_dim=96, num_query_heads=8, num_kv_heads=2,
                                head_dim=16, vocab_size=500, attention_layer_pattern="LGLG", sliding_window_size=5,
                                attention_output_gate=True, layer_loops=loops)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["layer_loops"] == loops
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("name", ["glm5", "deepseek3.2-671b"])
@pytest.mark.parametrize("knobs", [{}, dict(remat_policy="full")], ids=["plain", "remat"])
def test_the_sparse_indexer_loss_equals_xla(name, knobs):
    """indexer_loss_pairs='selected' (Megatron's sparse indexer loss): the Flax model's KL target over the selected
    pairs' gathered keys, the scores' backward dense; hardware equal to XLA, and below the dense loss's."""
    cfg = maxflops.load_config(name, indexer_loss_scaling_factor=0.1, indexer_loss_pairs="selected")
    c, model, params, tokens = M.build(cfg, abstract=True, mode="train", **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, "train", abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
    dense = maxflops.count(c, indexer_loss_pairs="all")
    assert b.hardware_components["indexer_kl"] < dense.hardware_components["indexer_kl"]
    assert b.hardware_components["indexer_score"] == dense.hardware_components["indexer_score"]


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_prompt_tokens_equal_xla(mode, knobs):
    """prompt_tokens (CPM-Ant): the Flax model runs a learned prompt ahead of every sequence through the layers and
    drops it before the head; XLA equal to the engine."""
    cfg = maxflops.model_config(num_decoder_layers=2, emb_dim=40, num_query_heads=4, num_kv_heads=4, head_dim=10,
                                mlp_dim=26, vocab_size=70, mlp_activations=("gelu", "linear"), causal=False,
                                prompt_tokens=5)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_zamba_1_equals_xla(mode, knobs, tmp_path):
    """Zamba (1) read from transformers' own saved config (the zoo's): shared blocks with GQA and a head width of its
    own ('Z') before Mamba-1 mixers ('A'); the Flax model equal to XLA."""
    import json
    import pathlib

    from maxflops.loaders import load_hf_config

    case = json.loads((pathlib.Path(__file__).parents[1] / "fixtures/hf_zoo/cases.json").read_text())["cases"]["zamba"]
    (tmp_path / "config.json").write_text(json.dumps(dict(case["config"], attention_head_dim=12)))
    cfg = maxflops.model_config(**load_hf_config(tmp_path / "config.json").overrides, max_target_length=16)
    assert cfg["attention_layer_pattern"] * 2 == "AZAAZA" and cfg["zamba_head_dim"] == 12 and cfg["num_kv_heads"] == 2
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("prefill", dict(mla_absorbed=True)), ("train", dict(mla_absorbed=True))],
                         ids=["prefill", "train", "remat", "absorbed-prefill", "absorbed-train"])
def test_mla_with_an_output_gate_equals_xla(mode, knobs):
    """attention_output_gate on MLA (Kimi K3's g_proj, D -> heads x v_head_dim): the Flax model gates the attention
    output per value channel (absorbed: once the latent output is expanded); XLA equal to the engine."""
    c, model, params, tokens = M.build(maxflops.load_config("deepseek3-671b", attention_output_gate=True),
                                       abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(mla_absorbed=True))], ids=["prefill", "train", "remat", "absorbed"])
def test_axk2s_q_path_and_gated_norms_equal_xla(mode, knobs):
    """A.X K2: MLA whose q up-projection (and its output gate) reads the q latent normed and raw side by side
    (mla_q_latent_concat), gated norms (gated_norm_rank: the input norm of every layer, the FFN's of MoE layers), the
    DSA indexer and a MoE; XLA equal to the engine."""
    cfg = maxflops.model_config(num_decoder_layers=3, emb_dim=64, mlp_dim=96, num_query_heads=4, vocab_size=500,
                                attention_type="mla", q_lora_rank=16, kv_lora_rank=12, qk_nope_head_dim=6,
                                qk_rope_head_dim=4, v_head_dim=6, mla_q_latent_concat=True, attention_output_gate=True,
                                gated_norm_rank=5, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=20,
                                first_num_dense_layers=1, shared_experts=1, use_sparse_indexer=True, index_n_heads=2,
                                index_head_dim=4, index_topk=5, max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["mla_q_latent_concat"] and c["gated_norm_rank"] == 5
    b = maxflops.count(c)
    assert b.hardware_components["norm_gate"] > 0
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(qsa_impl="dense", indexer_impl="dense"))],
                         ids=["prefill", "train", "remat", "dense-qsa"])
def test_qwen4_exps_gated_hyper_connections_equal_xla(mode, knobs):
    """Qwen4-Exp's layers: gated hyper-connections (mhc_lowrank: per-channel input weights G*D -> r -> G*D, output
    weights G*D -> G, the hyper head's likewise) around gated delta nets and a QSA layer, a MoE with a gated shared
    expert; XLA equal to the engine, by component."""
    cfg = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="DDDQ", emb_dim=64, num_query_heads=4,
                                num_kv_heads=2, head_dim=16, vocab_size=500, attention_output_gate=True,
                                gdn_num_key_heads=2, gdn_num_value_heads=4, gdn_key_head_dim=8, gdn_value_head_dim=8,
                                index_n_heads=2, index_head_dim=8, qsa_block_size=4, qsa_budget=8,
                                mhc_expansion_rate=3, mhc_plain_residual=True, mhc_lowrank=6, mhc_hyper_head=True,
                                num_experts=4, num_experts_per_tok=2, moe_mlp_dim=20, shared_experts=1,
                                shared_expert_mlp_dim=18, shared_expert_gate=True, max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["mhc_lowrank"] == 6 and "Q" in c["attention_layer_pattern"]
    assert_equal_by_component(maxflops.count(c), model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(weighted_sum_impl="streams_elementwise"))],
                         ids=["prefill", "train", "remat", "streams-elementwise"])
def test_hy_v4s_hyper_connections_without_residual_mixing_equal_xla(mode, knobs):
    """HY-V4: hyper-connections that keep the streams (mhc_plain_residual: each branch projects to its pre and post
    weights only, G*D -> 2G), a hyper head, MLA's output gate and the shared DSA indexer; XLA equal to the engine."""
    cfg = maxflops.model_config(num_decoder_layers=3, emb_dim=64, mlp_dim=96, num_query_heads=4, vocab_size=500,
                                attention_type="mla", q_lora_rank=16, kv_lora_rank=12, qk_nope_head_dim=6,
                                qk_rope_head_dim=4, v_head_dim=6, attention_output_gate=True, mhc_expansion_rate=3,
                                mhc_hyper_head=True, mhc_plain_residual=True, num_experts=4, num_experts_per_tok=2,
                                moe_mlp_dim=20, first_num_dense_layers=1, shared_experts=1, use_sparse_indexer=True,
                                index_n_heads=2, index_head_dim=4, index_topk=5, index_topk_freq=2,
                                index_skip_offset=1, max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["mhc_plain_residual"]
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs,docs", [("prefill", {}, ()), ("train", {}, ()),
                                             ("train", dict(remat_policy="full"), ()), ("prefill", {}, (5, 11)),
                                             ("train", {}, (5, 11)), ("train", dict(gated_norm_rank=3), ())],
                         ids=["prefill", "train", "remat", "packed-prefill", "packed-train", "with-gated-norms"])
def test_inklings_parts_equal_xla(mode, knobs, docs):
    """Inkling: relative-position logits (r_proj and the profiles over the extent: the window on a sliding layer),
    causal convs over the keys and values and over each branch's output, a router that scores the shared experts,
    sliding layers of their own head width; XLA equal to the engine (each document's convs its own)."""
    cfg = maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="LG", emb_dim=64, mlp_dim=96,
                                num_query_heads=4, num_kv_heads=2, head_dim=16, vocab_size=500, sliding_window_size=6,
                                relative_logits_dim=4, relative_logits_extent=9, kv_conv_kernel=3,
                                residual_conv_kernel=4, num_experts=4, num_experts_per_tok=2, moe_mlp_dim=20,
                                shared_experts=1, moe_router_shared=True, max_target_length=16)
    if docs:
        knobs = dict(knobs, per_device_batch_size=1, max_target_length=sum(docs))
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, segment_lengths=docs, **knobs)
    assert c["relative_logits_dim"] and c["kv_conv_kernel"] and c["residual_conv_kernel"]
    b = maxflops.count(c, segment_lengths=list(docs) or None)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops


@pytest.mark.parametrize("mode,knobs,docs", [("prefill", {}, ()), ("train", {}, ()),
                                             ("train", dict(remat_policy="full"), ()), ("prefill", {}, (5, 11)),
                                             ("train", {}, (5, 11))],
                         ids=["prefill", "train", "remat", "packed-prefill", "packed-train"])
def test_inkling2s_parts_equal_xla(mode, knobs, docs, loop=False):
    """Inkling 2: on every attention layer a sink logit per head from D and an output gate; on the full layers key
    and value convs of per-token taps (their taps a multiply and a sum); attention residuals whose full layers read an
    aggregate each for queries, keys and values, beside the convs over each branch's output; XLA equal to the engine,
    by component."""
    cfg = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="LLGL", emb_dim=64, num_query_heads=4,
                                num_kv_heads=2, head_dim=16, vocab_size=500, sliding_window_size=6,
                                relative_logits_dim=4, relative_logits_extent=9, kv_conv_kernel=3,
                                kv_conv_dynamic_layers="G", attention_sink_proj=True, attention_output_gate=True,
                                residual_conv_kernel=4, attn_res_block_size=2, attn_res_qkv_layers="G",
                                num_experts=4, num_experts_per_tok=2, moe_mlp_dim=20, max_target_length=16,
                                **(dict(layer_loops=("2-3*3",), loop_message_rank=5) if loop else {}))
    if docs:
        knobs = dict(knobs, per_device_batch_size=1, max_target_length=sum(docs))
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, segment_lengths=docs, **knobs)
    assert c["kv_conv_dynamic_layers"] == c["attn_res_qkv_layers"] == "G" and c["attention_sink_proj"]
    b = maxflops.count(c, segment_lengths=list(docs) or None)
    assert bool(b.hardware_components.get("message_gate")) == loop
    assert_equal_by_component(b, model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs,docs", [("prefill", {}, ()), ("train", {}, ()),
                                             ("train", dict(remat_policy="full"), ()), ("train", {}, (5, 11))],
                         ids=["prefill", "train", "remat", "packed-train"])
def test_inkling2_loops_passes_and_messages_equal_xla(mode, knobs, docs):
    """Inkling 2 Loop: layers 2-3 run three passes, each from the snapshots the loop began with, the later two gating
    their query, key, value and FFN inputs by the previous pass's messages; XLA equal to the engine, by component."""
    test_inkling2s_parts_equal_xla(mode, knobs, docs, loop=True)


@pytest.mark.parametrize("mode,knobs,docs", [("prefill", {}, ()), ("train", {}, ()),
                                             ("train", dict(remat_policy="full"), ()), ("train", {}, (5, 11)),
                                             ("train", dict(altup_num_inputs=1, laurel_rank=0), ())],
                         ids=["prefill", "train", "remat", "packed-train", "one-stream-no-laurel"])
def test_gemma3ns_altup_and_laurel_equal_xla(mode, knobs, docs):
    """Gemma 3n's AltUp (streams predicted before each layer and corrected after it, projected in from the embedding
    and out before the head) and LAuReL (D -> r -> D beside the attention), on sliding and global layers of their
    own FFN widths; XLA equal to the engine, by component."""
    cfg = maxflops.model_config(num_decoder_layers=3, attention_layer_pattern="LLG", emb_dim=64, mlp_dim=96,
                                num_query_heads=4, num_kv_heads=2, head_dim=16, vocab_size=500, sliding_window_size=6,
                                altup_num_inputs=4, laurel_rank=6, layer_widths=("mlp_dim@1=80",),
                                max_target_length=16)
    if docs:
        knobs = dict(knobs, per_device_batch_size=1, max_target_length=sum(docs))
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, segment_lengths=docs, **knobs)
    b = maxflops.count(c, segment_lengths=list(docs) or None)
    assert c["altup_num_inputs"] == knobs.get("altup_num_inputs", 4)
    assert_equal_by_component(b, model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs,docs", [("prefill", {}, ()), ("train", {}, ()),
                                             ("train", dict(remat_policy="full"), ()), ("prefill", {}, (5, 11)),
                                             ("train", {}, (5, 11)),
                                             ("train", dict(cca_depthwise_kernel=3, cca_grouped_kernel=1), ())],
                         ids=["prefill", "train", "remat", "packed-prefill", "packed-train", "kernels-3-1"])
def test_zayas_cca_and_mlp_router_equal_xla(mode, knobs, docs):
    """ZAYA: compressed convolutional attention (the q and k channels through a depthwise and a per-head grouped
    causal conv, the values half delayed) on global and sliding layers, a MoE whose router is an MLP; XLA equal to
    the engine by component (each document's convs its own)."""
    cfg = maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="GL", emb_dim=64, num_query_heads=4,
                                num_kv_heads=2, head_dim=8, vocab_size=500, sliding_window_size=6,
                                cca_depthwise_kernel=2, cca_grouped_kernel=2, num_experts=4, num_experts_per_tok=1,
                                moe_mlp_dim=20, moe_router_mlp_dim=12, max_target_length=16)
    if docs:
        knobs = dict(knobs, per_device_batch_size=1, max_target_length=sum(docs))
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, segment_lengths=docs, **knobs)
    assert c["cca_depthwise_kernel"] and c["moe_router_mlp_dim"] == 12
    b = maxflops.count(c, segment_lengths=list(docs) or None)
    assert_equal_by_component(b, model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(attention_impl="blocked", attention_block_q=4,
                                                       attention_block_kv=3)),
                                        ("train", dict(moe_impl="dense"))],
                         ids=["prefill", "train", "remat", "blocked", "dense-moe"])
def test_doges_dynamic_mask_and_cdmoe_equal_xla(mode, knobs):
    """Doge: the dynamic mask's scores from the values (dt_proj; the mask itself elementwise, over the tiles of the
    causal mask it picks within), the CDMoE's product-key router, single-neuron ungated experts beside the gated
    shared MLP; XLA equal to the engine by component."""
    cfg = maxflops.model_config(num_decoder_layers=2, emb_dim=64, num_query_heads=4, num_kv_heads=2, head_dim=16,
                                vocab_size=500, dynamic_mask_keys=5, num_experts=16, num_experts_per_tok=3,
                                moe_mlp_dim=1, moe_router_product_keys=True, moe_experts_ungated=True,
                                shared_experts=1, shared_expert_mlp_dim=40, max_target_length=16)
    knobs = {"attention_impl": "dense", "num_experts": 16, "moe_mlp_dim": 1, **knobs}  # (kept through the reduction)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["dynamic_mask_keys"] == 5 and c["num_experts"] == 16 and c["moe_mlp_dim"] == 1
    b = maxflops.count(c)
    assert_equal_by_component(b, model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_mlstm_layers_equal_xla(mode, knobs):
    """xLSTM: mLSTM layers (the recurrent form) each with a gated FFN, beside an attention layer; XLA equal to the
    engine by component."""
    cfg = maxflops.model_config(num_decoder_layers=3, attention_layer_pattern="TTG", emb_dim=64, mlp_dim=96,
                                num_query_heads=4, num_kv_heads=2, head_dim=16, mlstm_num_heads=4, vocab_size=500,
                                max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    assert_equal_by_component(b, model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(altup_num_inputs=3, laurel_rank=4))],
                         ids=["prefill", "train", "remat", "with-altup"])
def test_per_layer_embeddings_equal_xla(mode, knobs):
    """Per-layer embeddings (Gemma 4 E2B/E4B's, Gemma 3n's): the embedding projected D -> layers x P once, and in
    every layer a gate D -> P of its output times its slice, then P -> D (with AltUp, from the corrected active stream
    into the others); XLA equal to the engine by component."""
    cfg = maxflops.model_config(num_decoder_layers=3, attention_layer_pattern="LLG", emb_dim=64, mlp_dim=96,
                                num_query_heads=4, num_kv_heads=2, head_dim=16, vocab_size=500, sliding_window_size=6,
                                per_layer_input_dim=6, max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["per_layer_input_dim"] == 6
    assert_equal_by_component(maxflops.count(c), model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(double_wide_kv_shared_mlp=True, per_layer_input_dim=5))],
                         ids=["prefill", "train", "remat", "double-wide-with-ple"])
def test_kv_shared_layers_equal_xla(mode, knobs):
    """KV sharing (Gemma 4's, Gemma 3n's): the last layers project queries only and attend an earlier layer's keys
    and values (the Flax layer stands in for them without a matmul); XLA equal to the engine by component."""
    cfg = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="LG", emb_dim=64, mlp_dim=96,
                                num_query_heads=4, num_kv_heads=2, head_dim=16, vocab_size=500, sliding_window_size=6,
                                num_kv_shared_layers=2, max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["num_kv_shared_layers"] == 2
    assert_equal_by_component(maxflops.count(c), model, params, tokens, mode)


@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_a_gemma3n_file_builds_a_flax_model_equal_to_xla(mode, knobs, tmp_path):
    """The zoo's Gemma 3n file (AltUp, LAuReL, per-layer embeddings, KV sharing, two FFN widths) through the loader:
    the Flax model of what it reads equals XLA by component."""
    import json

    from maxflops.loaders import load_hf_config
    from repo import ROOT

    case = json.loads((ROOT / "tests" / "fixtures" / "hf_zoo" / "cases.json").read_text())["cases"]["gemma3n_text"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["config"]))
    cfg = maxflops.model_config(**load_hf_config(path).overrides, max_target_length=16)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode, **knobs)
    assert c["altup_num_inputs"] and c["laurel_rank"] and c["per_layer_input_dim"] and c["num_kv_shared_layers"]
    assert_equal_by_component(maxflops.count(c), model, params, tokens, mode)


@pytest.mark.parametrize("extra", [dict(remat_policy="reversible"), dict(head_input_dim=64),
                                   dict(engram_layers=(1,)), dict(vision_layers=2),
                                   dict(num_experts=4, num_experts_per_tok=2, zero_experts=2)],
                         ids=lambda e: next(iter(e)) if next(iter(e)) != "num_experts" else "zero_experts")
def test_what_the_flax_model_does_not_build_is_refused_by_name(extra):
    """A model built without the feature would be compared with a count that has it (a plausible mismatch)."""
    key = "zero_experts" if "zero_experts" in extra else next(iter(extra))
    cfg = maxflops.model_config(num_decoder_layers=2, **extra)
    with pytest.raises(ValueError, match=rf"config key '{key}'.*the Flax model does not build"):
        M.build(cfg, abstract=True, mode="train")


@pytest.mark.parametrize("extra,key", [(dict(laurel_rank=4), "laurel_rank"),
                                       (dict(per_layer_input_dim=6, attn_res_block_size=2), "attn_res_block_size"),
                                       (dict(per_layer_input_dim=6, mhc_expansion_rate=2), "mhc_expansion_rate")],
                         ids=["laurel-without-altup", "ple-with-attn-res", "ple-with-mhc"])
def test_a_feature_its_proof_module_does_not_run_there_is_refused_by_name(extra, key):
    """LAuReL runs inside AltUp's layer only; attention residuals' layers add no per-layer embedding, and mHC's
    streams are no [B, L, D] to project it from: the model refuses rather than build one without it."""
    cfg = maxflops.model_config(num_decoder_layers=4, **extra)
    with pytest.raises(ValueError, match=rf"^{key}: .*not modelled in the Flax model"):
        M.build(cfg, abstract=True, mode="train")
