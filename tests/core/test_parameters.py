"""``maxflops.parameters`` against the shipped configs' weight shapes (tests/shapes.py, another route than the
per-token prices the count reads), and its rules on drawn configs: integers, active within total, the tie's one
table, the count the same whatever the step."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from test_properties import budget, build

import maxflops
import shapes
from maxflops.config import validate
from strategies import config_kwargs

# (drawn configs set keys the drawn model may not read: test_properties.py's filter, for the same reason)
pytestmark = pytest.mark.filterwarnings("ignore::maxflops.InertKeyWarning")


@pytest.mark.parametrize("name", maxflops.available_models())
def test_the_count_is_the_weight_shapes(name):
    """Exact, without the MTP modules and the weights no matmul reads (shapes' ``state``), but where stated:
    GLM-5's layers that reuse another's top-k hold no indexer (as transformers' GlmMoeDsa builds them; shapes gives
    every DSA layer one), Kimi K3's attention residuals' score vectors (a D-vector per aggregate: weights shapes
    does not list)."""
    c = validate(maxflops.load_config(name, mtp_num_layers=0))
    p = maxflops.parameters(c)
    want = shapes.parameter_count(c, p.tied, state=False)
    reusing = sum(1 for r in maxflops.count(c).layers if r.mixer == "dsa" and not r.computes_index)
    want -= reusing * sum(math.prod(s) for _, s in shapes.indexer_weights(c))
    assert p.total - p.components.get("attn_res", 0) == want
    assert (reusing > 0) == (name == "glm5") and ("attn_res" in p.components) == (name == "kimi-k3")


@budget()
@given(kw=config_kwargs())
def test_the_rules_on_drawn_configs(kw):
    cfg = build(kw)
    p = maxflops.parameters(cfg)
    assert all(type(v) is int and v > 0 for v in (*p.components.values(), *p.active_components.values()))
    assert 0 < p.active <= p.total == sum(p.components.values()) and p.embeddings <= p.total
    c = validate(cfg)
    if "Z" not in c["attention_layer_pattern"]:  # (rows that run one shared Zamba block each show it)
        assert sum(t for _, t, _ in p.layers) <= p.total
    if c["num_experts"] == 1 and not c["attention_router_experts"]:
        assert p.active == p.total
    untied = maxflops.parameters(cfg, logits_via_embedding=False)
    d, vocab = c["emb_dim"], p.components["embeddings"] // c["emb_dim"]
    tied_applies = c["logits_via_embedding"] and (c["head_input_dim"] or d) == d
    assert untied.total - p.total == (vocab * d if tied_applies else 0)
    for mode in ("train", "prefill", "decode"):  # the step changes nothing
        assert maxflops.parameters(cfg, mode=mode).to_dict() == p.to_dict()


@pytest.mark.parametrize("name", ["deepseek3-671b", "gemma4-26b", "qwen3-next-80b-a3b"])
def test_a_breakdown_carries_its_models_parameters(name):
    """``count(...).parameters`` is ``maxflops.parameters`` of the same config, whatever the step, the convention or the
    route the count took (a step form's second length); ``to_dict`` and the text report carry them."""
    from maxflops.report import text_report

    cfg = maxflops.load_config(name, max_target_length=4096)
    want = maxflops.parameters(cfg).to_dict()
    for keys in ({}, {"max_target_length": 2048}, {"mode": "decode"}, {"convention": "megatron_papers"},
                 {"per_device_batch_size": 3}):
        b = maxflops.count(cfg, **keys)
        assert b.parameters.to_dict() == want and b.to_dict()["parameters"] == want, keys
    p = maxflops.count(cfg).parameters
    text = text_report(maxflops.count(cfg), validate(cfg))
    assert f"{'moe_routed':<14}  {p.components['moe_routed'] / 1e9:>10,.3f}  " \
           f"{p.active_components['moe_routed'] / 1e9:>10,.3f}" in text
    assert f"Parameters: {p.total / 1e9:,.3f}B total" in text
