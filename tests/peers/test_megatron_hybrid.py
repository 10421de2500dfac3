"""Megatron-LM's hybrid path (Mamba / attention / MLP / MoE layer patterns) against ``convention='megatron_main'``.

tests/fixtures/megatron_hybrid/cases.json holds what Megatron-LM's own ``num_floating_point_operations`` (main at
d98e8a6) returned for the shipped Nemotron configs, whole rows and a packed batch, run by the script beside it.
Megatron prices a Mamba layer with d_in = 2 x hidden whatever the heads (only the dt part keeps them), 7 FLOPs per
(token, channel, state) for the scan and no conv; maxflops' exact count differs there, and the test shows by how
much. Set MAXFLOPS_MEGATRON_LM to a Megatron-LM git directory to rerun the function itself.
"""

from __future__ import annotations

import json
import os

import pytest

import maxflops
from maxflops.loaders.hf.ssm import hybrid_patterns
from repo import FIXTURES

HERE = FIXTURES / "megatron_hybrid"
DATA = json.loads((HERE / "cases.json").read_text())


# a model no shipped config holds: gated-delta-net, attention, Mamba and MLP blocks
GDN_HYBRID = dict(num_decoder_layers=8, attention_layer_pattern="D-D-G-M-", ffn_layer_pattern="-F-F-F-F", emb_dim=2048,
                  vocab_size=151936, mlp_dim=5120, num_query_heads=16, num_kv_heads=2, head_dim=128,
                  mamba_num_heads=64, mamba_head_dim=64, mamba_n_groups=8, mamba_state_dim=128, gdn_num_key_heads=16,
                  gdn_num_value_heads=32, gdn_key_head_dim=128, gdn_value_head_dim=128, gdn_conv_kernel_dim=4)


# Megatron's gdp_stack_spec: its 'M' layers are gated delta products (32 heads x 64, 8 groups x 128, 3 steps)
GDP_HYBRID = dict(num_decoder_layers=8, attention_layer_pattern="P-P-G-P-", ffn_layer_pattern="-F-F-F-F", emb_dim=2048,
                  vocab_size=151936, mlp_dim=5120, num_query_heads=16, num_kv_heads=2, head_dim=128, gdp_num_heads=32,
                  gdp_head_dim=64, gdp_num_groups=8, gdp_state_dim=128, gdp_num_householder=3, gdp_conv_kernel=4)
HYBRIDS = {"gdn": GDN_HYBRID, "gdp": GDP_HYBRID}


def load(name, **kw):
    return maxflops.model_config(**HYBRIDS[name], **kw) if name in HYBRIDS else maxflops.load_config(name, **kw)


def mtp_keys(pattern: str, depths) -> dict:
    """Megatron's MTP depths (the hybrid pattern after '/', one copy per depth) as maxflops' MTP keys."""
    if "/" not in pattern:
        return {}
    shapes = hybrid_patterns(pattern.split("/")[1])
    return dict(mtp_num_layers=depths, mtp_layer_pattern=shapes["attention_layer_pattern"],
                mtp_ffn_layer_pattern=shapes["ffn_layer_pattern"])


def count(name, case, **kw):
    model = name.split()[0]
    args = case["args"]
    kw = {**mtp_keys(args["hybrid_layer_pattern"], args.get("mtp_num_layers")), **kw}
    docs = case["documents"]
    cfg = load(model, max_target_length=args["seq_length"], per_device_batch_size=case["batch"], **kw)
    return maxflops.count(cfg, segment_lengths=docs) if docs else maxflops.count(cfg)


@pytest.mark.parametrize("name", sorted(DATA["cases"]))
def test_megatron_main_equals_megatron_lm(name):
    case = DATA["cases"][name]
    assert float(case["flops"]).is_integer()
    assert count(name, case, convention="megatron_main").total == int(case["flops"])


def test_where_megatron_departs_from_the_real_layer():
    """Nemotron-3-Nano's Mamba is 64 x 64 = 4096 wide, not 2 x 2688 = 5376: Megatron over-counts its projections and
    scan, counts 7 FLOPs per scan element where the layer does 2, and leaves out the conv. Each departure is a knob;
    set back to the real layer's, the Mamba figures equal the exact count's."""
    case = DATA["cases"]["nemotron-3-nano-30b-a3b"]
    megatron = count("nemotron-3-nano-30b-a3b", case, convention="megatron_main")
    exact = count("nemotron-3-nano-30b-a3b", case)
    assert "ssm_conv" not in megatron.components and exact.components["ssm_conv"] > 0
    assert megatron.components["qkv_proj"] > exact.components["qkv_proj"]
    assert megatron.components["out_proj"] > exact.components["out_proj"]
    real = count("nemotron-3-nano-30b-a3b", case, convention="megatron_main", mamba_inner_width="heads",
                 mamba_scan_flops=2, ssm_conv_flops=True, gdn_conv_taps="exact")
    for part in ("qkv_proj", "out_proj", "ssm_conv"):
        assert real.components[part] == exact.components[part], part
    # what is left between them is Megatron's attention (half the square) and its uncounted router
    assert exact.total - real.total == (exact.components["core_attention"] - real.components["core_attention"]
                                        + exact.components["moe_router"])
    assert megatron.total > exact.total  # its wider Mamba and 7-FLOP scan outweigh what it leaves out


def test_megatron_gated_delta_product_against_the_real_layer():
    """Megatron prices a gated-delta-product layer's core at (4 M + 3) N P per head and token where the layer's
    M + 1 state reads do 2 (M + 1) N P; its projections and conv (every tap) are the layer's. Set back to the exact
    core and taps, the two counts agree on every gated-delta-product layer."""
    case = DATA["cases"]["gdp hybrid"]
    megatron = count("gdp hybrid", case, convention="megatron_main")
    real = count("gdp hybrid", case, convention="megatron_main", gdp_core_flops="exact", gdn_conv_taps="exact")
    exact = count("gdp hybrid", case)
    M, H, N, P, tokens, layers = 3, 32, 128, 64, 2 * 4096, 3
    gdp = [i for i, row in enumerate(exact.layers) if row.mixer == "gdp"]
    assert len(gdp) == layers
    for i in gdp:
        assert real.layers[i].components == exact.layers[i].components
    assert megatron.components["core_attention"] - real.components["core_attention"] == \
        3 * ((4 * M + 3) - 2 * (M + 1)) * H * N * P * tokens * layers
    # the conv's padding taps: K - 1 - i missing at each row's first K - 1 tokens (i < K - 1), over 3 * 2 rows
    channels, K = M * H * P + (M + 1) * 8 * N, 4
    assert megatron.components["gdp_conv"] - exact.components["gdp_conv"] == \
        3 * 2 * channels * sum(K - 1 - i for i in range(K - 1)) * 2 * layers


@pytest.mark.skipif(not os.environ.get("MAXFLOPS_MEGATRON_LM"),
                    reason="opt-in: MAXFLOPS_MEGATRON_LM=/path/to/Megatron-LM (a git directory) reruns the function")
def test_live_megatron_lm():
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("gen", HERE / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    fn = gen.megatron_function(os.environ["MAXFLOPS_MEGATRON_LM"], DATA["meta"]["megatron_lm_commit"])
    for name, case in DATA["cases"].items():
        args = SimpleNamespace(**{**gen.BASE, **case["args"]})
        docs = case["documents"]
        extra = dict(seqlen_squared_sum_in_batch=sum(L * L for L in docs), total_real_tokens_in_batch=sum(docs)) \
            if docs else {}
        assert fn(args, case["batch"], **extra) == case["flops"], name


@pytest.mark.parametrize("extra", [{}, {"mtp_layers_block_type": ["attention", "moe"]},
                                   {"mtp_hybrid_override_pattern": "*E"}])
def test_a_nemotron_h_file_with_mtp_counts_megatrons_figure(tmp_path, extra):
    """NemotronH's MTP modules (num_nextn_predict_layers, each running mtp_layers_block_type's blocks; its class
    default an attention block then a MoE block, the legacy names and pattern string as __post_init__ reads them):
    the file loads as Megatron's pattern after '/' and counts what its function returns for it."""
    from maxflops import loaders

    data = json.loads((FIXTURES / "hf" / "nemotron-3-nano-30b-a3b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "num_nextn_predict_layers": 2, **extra}))
    loaded = loaders.load_hf_config(path)
    assert (loaded.overrides["mtp_num_layers"], loaded.overrides["mtp_layer_pattern"],
            loaded.overrides["mtp_ffn_layer_pattern"]) == (2, "G-", "-E")
    case = DATA["cases"]["nemotron-3-nano-30b-a3b mtp"]
    b = maxflops.count(maxflops.model_config(**loaded.overrides, max_target_length=8192, convention="megatron_main"))
    assert b.total == int(case["flops"])


def test_megatron_hybrid_mtp_against_the_real_modules():
    """Megatron's hybrid path prices each MTP depth's blocks and its output head but not its eh projection (2D -> D)
    or its norms, which its GPT path counts; the exact count has them. The two differ by exactly that."""
    case = DATA["cases"]["nemotron-3-nano-30b-a3b mtp"]
    megatron = count("nemotron-3-nano-30b-a3b mtp", case, convention="megatron_main")
    with_eh = count("nemotron-3-nano-30b-a3b mtp", case, convention="megatron_main", mtp_eh_proj=True)
    D, tokens, depths = 2688, 8192, 2
    assert with_eh.total - megatron.total == 3 * 2 * (2 * D) * D * tokens * depths
    rows = [r.name for r in megatron.layers if r.group == "mtp"]
    assert rows == ["mtp 1.1", "mtp 1.2", "mtp 2.1", "mtp 2.2"]


def test_mtp_layer_shapes_are_checked():
    kw = dict(maxflops.load_config("nemotron-3-nano-30b-a3b").to_dict(), mtp_num_layers=1)
    kw.pop("convention_knobs_from", None)
    for bad, key in (({}, "mtp_ffn_layer_pattern"), (dict(mtp_layer_pattern="G", mtp_ffn_layer_pattern="-E"),
                                                     "mtp_ffn_layer_pattern"),
                     (dict(mtp_layer_pattern="G-", mtp_ffn_layer_pattern="--"), "mtp_ffn_layer_pattern"),
                     (dict(mtp_layer_pattern="G-", mtp_ffn_layer_pattern="-X"), "mtp_ffn_layer_pattern")):
        with pytest.raises(ValueError, match=f"config key '{key}'"):
            maxflops.model_config(**{**kw, **bad})
    with pytest.raises(ValueError, match="config key 'mtp_ffn_layer_pattern'.*hybrid layer shapes"):
        maxflops.model_config(mtp_num_layers=1, mtp_layer_pattern="G", mtp_ffn_layer_pattern="F")
