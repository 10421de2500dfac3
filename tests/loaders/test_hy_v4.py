"""HY-V4 (hy_v4): its hyper-connections without the residual mixing (mhc_plain_residual), MLA's output gate and the
shared DSA indexer read from the file; the class's indexer schedule when the file names none. Exact against torch
forward and training in the zoo (tests/loaders/test_hf_zoo.py); the Flax model equal to XLA in
tests/xla/test_xla_model.py."""

from __future__ import annotations

import json

import pytest

import maxflops
from maxflops.loaders import load_hf_config

FILE = {"model_type": "hy_v4", "hidden_size": 40, "num_hidden_layers": 10, "num_attention_heads": 4,
        "q_lora_rank": 12, "kv_lora_rank": 10, "qk_nope_head_dim": 6, "qk_rope_head_dim": 4, "v_head_dim": 8,
        "intermediate_size": 26, "moe_intermediate_size": 22, "n_routed_experts": 5, "n_shared_experts": 1,
        "num_experts_per_tok": 2, "index_n_heads": 2, "index_head_dim": 6, "index_topk": 4, "hc_mult": 4,
        "vocab_size": 70}


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path).overrides


def test_the_classes_indexer_schedule_when_the_file_names_none(tmp_path):
    """HYV4Config: 'full' on layer 0 and on every fourth from layer 1, else 'shared'."""
    o = _load(tmp_path, FILE)
    rows = maxflops.count(maxflops.model_config(**o)).layers
    own = [int(r.name.split()[1]) for r in rows if r.group == "decoder" and r.computes_index]
    assert own == [i for i in range(10) if i == 0 or (i - 1) % 4 == 0] == [0, 1, 5, 9]
    types = ["full" if i % 3 == 0 else "shared" for i in range(10)]
    rows = maxflops.count(maxflops.model_config(**_load(tmp_path, {**FILE, "indexer_types": types}))).layers
    assert [int(r.name.split()[1]) for r in rows if r.group == "decoder" and r.computes_index] == [0, 3, 6, 9]


def test_the_hyper_connections_by_weight_shapes(tmp_path):
    o = _load(tmp_path, FILE)
    assert o["mhc_expansion_rate"] == 4 and o["mhc_plain_residual"] and o["mhc_hyper_head"]
    assert o["attention_output_gate"] and o["first_num_dense_layers"] == 1
    b = maxflops.count(maxflops.model_config(**o, mode="prefill", max_target_length=1, per_device_batch_size=1))
    G, D = 4, 40
    # per layer two branches, each fn [2G, G*D] and the pre-weighted sum over the G streams (2 G D); no G x G mixing
    assert b.components["mhc"] == 10 * 2 * (2 * G * D * 2 * G + 2 * G * D)
    assert b.components["mhc_head"] == 2 * G * D * G  # hc_fn [G, G*D]


@pytest.mark.parametrize("convention", ["maxtext", "megatron"])
def test_the_peers_refuse_streams_kept(convention):
    with pytest.raises(ValueError, match="'convention'"):
        maxflops.model_config(mhc_expansion_rate=2, mhc_plain_residual=True, convention=convention)
