"""Megatron-Bridge's FLOPs function against ``convention='megatron_bridge'``, its hybrid and GPT paths.

tests/fixtures/megatron_bridge/cases.json holds what NVIDIA-NeMo/Megatron-Bridge's own
``num_floating_point_operations`` (at 067f987d) returned for Nemotron models, run by the script beside it: whole
rows, a packed batch whose padding Bridge prices, and sliding windows on every attention layer, on every other one
(``window_attn_skip_freq``) and longer than the rows; and its GPT path on shipped models (dense, windows, MoE, DSA
with index reuse and MTP, the gated delta net, Kimi delta attention beside MLA, a packed DSA batch). Bridge is Megatron-LM main (see
test_megatron_hybrid.py) plus its window context, a packed batch's padding, and DSA's absorbed sparse core with its
indexer. Set MAXFLOPS_MEGATRON_BRIDGE=BRIDGE_GIT_DIR:MEGATRON_LM_GIT_DIR to rerun
the function itself.
"""

from __future__ import annotations

import json
import os

import pytest

import maxflops
from maxflops.loaders.hf.ssm import hybrid_patterns
from repo import FIXTURES

HERE = FIXTURES / "megatron_bridge"
DATA = json.loads((HERE / "cases.json").read_text())


# a model no shipped config holds: gated-delta-net, attention, Mamba and MLP blocks
GDN_HYBRID = dict(num_decoder_layers=8, attention_layer_pattern="D-D-G-M-", ffn_layer_pattern="-F-F-F-F", emb_dim=2048,
                  vocab_size=151936, mlp_dim=5120, num_query_heads=16, num_kv_heads=2, head_dim=128,
                  mamba_num_heads=64, mamba_head_dim=64, mamba_n_groups=8, mamba_state_dim=128, gdn_num_key_heads=16,
                  gdn_num_value_heads=32, gdn_key_head_dim=128, gdn_value_head_dim=128, gdn_conv_kernel_dim=4)


def load(name, **kw):
    return maxflops.model_config(**GDN_HYBRID, **kw) if name == "gdn" else maxflops.load_config(name, **kw)


def config(name, case, **kw):
    """The shipped config with the case's step; Bridge's window_size and window_attn_skip_freq as 'L' letters on the
    attention layers they reach (1-based positions over the whole pattern, as Bridge numbers them)."""
    m = case["model"]
    kw = dict(max_target_length=m["seq_length"], per_device_batch_size=case["batch"], **kw)
    if m.get("dsa_indexer_loss_coeff"):
        kw["indexer_loss_scaling_factor"] = m["dsa_indexer_loss_coeff"]
    if m.get("dsa_indexer_use_sparse_loss"):
        kw["indexer_loss_pairs"] = "selected"
    if m.get("experimental_attention_variant") == "dsv4_hybrid":
        kw["mtp_num_layers"] = m["mtp_num_layers"] or 0
    if "/" in (m.get("hybrid_layer_pattern") or ""):  # MTP depths: the pattern after '/', once per depth
        shapes = hybrid_patterns(m["hybrid_layer_pattern"].split("/")[1])
        kw.update(mtp_num_layers=m["mtp_num_layers"], mtp_layer_pattern=shapes["attention_layer_pattern"],
                  mtp_ffn_layer_pattern=shapes["ffn_layer_pattern"])
        m = {**m, "hybrid_layer_pattern": m["hybrid_layer_pattern"].split("/")[0]}
    if name.startswith("gdn"):
        return load("gdn", **kw)
    if m.get("window_size") and m.get("hybrid_layer_pattern"):
        freq = m.get("window_attn_skip_freq")
        mixers = hybrid_patterns(m["hybrid_layer_pattern"])["attention_layer_pattern"]
        kw["attention_layer_pattern"] = "".join("L" if ch == "G" and (freq is None or (i + 1) % freq) else ch
                                                for i, ch in enumerate(mixers))
        kw["sliding_window_size"] = m["window_size"][0] + m["window_size"][1] + 1
    return load(name.split()[0], **kw)


@pytest.mark.parametrize("name", sorted(DATA["cases"]))
def test_megatron_bridge_equals_its_function(name):
    case = DATA["cases"][name]
    assert float(case["flops"]).is_integer()
    b = maxflops.count(config(name, case, convention="megatron_bridge"), segment_lengths=case.get("documents"))
    if name in FLOAT_ROUNDED:
        # Bridge computes in float64; a packed batch's mean context (sum L^2 over the padded tokens) is no integer,
        # and the figure, above 2^52, steps by 1 in float64: its sum of terms is off by a few units
        assert abs(b.total - case["flops"]) <= 1e-14 * case["flops"]
    else:
        assert b.total == int(case["flops"])


# the one case whose float64 figure is not the exact rational one (see above)
FLOAT_ROUNDED = {"deepseek3.2-671b packed"}


def test_bridge_prices_the_padding_of_a_packed_batch():
    case = DATA["cases"]["nemotron-3-nano-30b-a3b packed"]
    docs = case["documents"]
    bridge = maxflops.count(config("nemotron-3-nano-30b-a3b", case, convention="megatron_bridge"),
                            segment_lengths=docs)
    real = maxflops.count(config("nemotron-3-nano-30b-a3b", case, convention="megatron_bridge",
                                 packed_tokens="real"), segment_lengths=docs)
    slots = case["batch"] * case["model"]["seq_length"]
    assert sum(docs) < slots
    assert bridge.components["logits"] * sum(docs) == real.components["logits"] * slots
    # the attention layers' pairs follow the documents (the Mamba scan, token-linear, does not)
    attention = [(a.components["core_attention"], b.components["core_attention"])
                 for a, b in zip(bridge.layers, real.layers) if a.mixer == "global"]
    assert attention and all(x == y for x, y in attention)


def test_bridge_is_refused_where_its_deepseek_v4_rule_has_no_term():
    """Bridge's dsv4_hybrid rule hard-codes compression ratios 4 (always with the indexer) and 128, window layers
    otherwise, one KV head, the q latent and the grouped output: any other compressed model is refused by name."""
    for kw, key in ((dict(csa_compress_ratio=8), "csa_compress_ratio"), (dict(hca_compress_ratio=64), "hca_compress_ratio"),
                    (dict(use_sparse_indexer=False), "use_sparse_indexer"), (dict(num_kv_heads=2), "num_kv_heads"),
                    (dict(attention_layer_pattern="GS"), "attention_layer_pattern"),
                    (dict(o_groups=0, o_lora_rank=0), "o_groups"), (dict(q_lora_rank=0), "q_lora_rank")):
        with pytest.raises(ValueError, match=f"config key '{key}': .*'megatron_bridge'"):
            maxflops.load_config("deepseek4-284b", convention="megatron_bridge", **kw)
        maxflops.load_config("deepseek4-284b", **kw)  # (each is a model the exact count prices)


def test_bridge_deepseek_v4_departures_from_the_exact_count():
    """DeepSeek-V4-Flash at 4K, where Bridge's dsv4_hybrid rule (equal to its function above) departs from the exact
    count, each by its own figure: the window priced whole from the first token on every layer (43 x 4096 x 128
    pairs), the q latent's and the KV entry's norms, and the indexer trained 3x over the full L x L/4 rectangle
    without its head weighting; no router, no mHC."""
    kw = dict(max_target_length=4096, per_device_batch_size=1)
    exact = maxflops.count(maxflops.load_config("deepseek4-284b", **kw))
    bridge = maxflops.count(maxflops.load_config("deepseek4-284b", convention="megatron_bridge", **kw))
    L, layers, W, H, hd, r_q, n_i, hd_i = 4096, 43, 128, 64, 512, 1024, 64, 128
    assert bridge.components["qkv_proj"] - exact.components["qkv_proj"] == 3 * 2 * (r_q + hd) * L * layers
    window = [r.components["core_attention"] for r in bridge.layers if r.mixer == "window"]
    assert window == [3 * 2 * 2 * H * hd * L * W] * 2  # the two window-only layers: T W pairs, no causal ramp
    csa = sum(1 for r in bridge.layers if r.mixer == "csa")
    assert bridge.components["indexer_score"] == 3 * 2 * n_i * hd_i * (L * L // 4) * csa
    for part in ("moe_router", "mhc", "mhc_head"):
        assert part in exact.components and part not in bridge.components
    for part in ("out_proj", "compressor", "moe_routed", "moe_shared", "logits"):
        assert bridge.components[part] == exact.components[part], part


def test_bridge_prices_the_indexer_loss_teacher():
    """DSA trained with the indexer's KL loss: Bridge adds the loss's target (the main scores over the indexer's
    pairs, absorbed widths, forward only), which the exact count leaves to hardware FLOPs (indexer_kl)."""
    kw = dict(max_target_length=4096, per_device_batch_size=1, convention="megatron_bridge")
    loss = maxflops.count(maxflops.load_config("glm5", indexer_loss_scaling_factor=0.001, **kw))
    off = maxflops.count(maxflops.load_config("glm5", indexer_loss_scaling_factor=0.001, indexer_kl_flops=False, **kw))
    h, kv_lora, rope, L = 64, 512, 64, 4096
    teacher = 2 * h * (kv_lora + rope) * (L * (L + 1) // 2)  # per indexing layer (the MTP layer's in its row)
    assert loss.total - off.total == teacher * sum(1 for r in loss.layers if r.computes_index)
    assert loss.components["indexer_kl"] == teacher * sum(1 for r in loss.layers
                                                          if r.computes_index and r.group == "decoder")
    exact = maxflops.count(maxflops.load_config("glm5", indexer_loss_scaling_factor=0.001, max_target_length=4096,
                                                per_device_batch_size=1))
    assert "indexer_kl" not in exact.components and exact.hardware_components["indexer_kl"] > 0


def test_bridge_departs_from_megatron_lm_main_where_it_should():
    """DSA: Bridge prices the absorbed sparse core and the indexer (main: dense MLA); windows: Bridge's context
    (main: none). A dense model without windows counts the same under both."""
    for name, same in (("llama3.1-8b", True), ("deepseek3.2-671b", False), ("gemma3-27b", False)):
        cfg = maxflops.load_config(name)
        main, bridge = (maxflops.count(cfg, convention=c).total for c in ("megatron_main", "megatron_bridge"))
        assert (main == bridge) == same, name


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_MEGATRON_BRIDGE"),
                    reason="opt-in: MAXFLOPS_MEGATRON_BRIDGE=BRIDGE_GIT_DIR:MEGATRON_LM_GIT_DIR reruns the function")
def test_live_megatron_bridge():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", HERE / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    bridge_dir, mlm_dir = os.environ["MAXFLOPS_MEGATRON_BRIDGE"].split(":")
    fn = gen.bridge_function(bridge_dir, mlm_dir, DATA["meta"]["megatron_bridge_commit"])
    for name, case in DATA["cases"].items():
        assert gen.run(fn, case) == case["flops"], name


def test_bridge_kda_term_is_the_exact_one_with_its_two_departures():
    """Kimi-Linear at 4K: Bridge's KDA term (equal to its function above) departs from the exact count by a full-rank
    output gate (D x H d instead of D x r + r x H d) and four state-sized ops per head (the layer reads its state
    twice); with the two knobs at their exact values the KDA layers' projections and core are the exact ones."""
    kw = dict(max_target_length=4096, per_device_batch_size=1)
    exact = maxflops.count(maxflops.load_config("kimi-linear-48b-a3b", **kw))
    bridge = maxflops.count(maxflops.load_config("kimi-linear-48b-a3b", convention="megatron_bridge", **kw))
    low = maxflops.count(maxflops.load_config("kimi-linear-48b-a3b", convention="megatron_bridge",
                                              kda_output_gate="low_rank", kda_core_state_ops=2, **kw))
    D, H, d, layers, tokens = 2304, 32, 128, 20, 4096
    gate = 2 * D * H * d - (2 * D * d + 2 * d * H * d)
    assert bridge.components["qkv_proj"] - low.components["qkv_proj"] == 3 * gate * tokens * layers
    assert bridge.components["core_attention"] - low.components["core_attention"] == 3 * 2 * 2 * H * d * d * tokens * layers
    kda = lambda b: [r.components for r in b.layers if r.mixer == "kda"]  # noqa: E731
    assert [{k: v for k, v in r.items() if k in ("qkv_proj", "core_attention", "out_proj")} for r in kda(low)] == \
        [{k: v for k, v in r.items() if k in ("qkv_proj", "core_attention", "out_proj")} for r in kda(exact)]
    assert 0.05 < bridge.total / exact.total - 1 < 0.06  # Bridge over-counts the whole model by 5.4% at 4K
