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
