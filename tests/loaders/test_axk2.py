"""A.X K2 (axk2): its q path (mla_q_latent_concat with the output gate) and gated norms (gated_norm_rank) read from
the file, priced by weight shapes; refused without a q latent. Exact against torch forward and training in the zoo
(tests/loaders/test_hf_zoo.py); the Flax model equal to XLA in tests/xla/test_xla_model.py."""

from __future__ import annotations

import json

import pytest

import maxflops
from maxflops.loaders import load_hf_config

FILE = {"model_type": "axk2", "hidden_size": 40, "num_hidden_layers": 3, "num_attention_heads": 4,
        "num_key_value_heads": 4, "q_lora_rank": 12, "kv_lora_rank": 10, "qk_nope_head_dim": 6, "qk_rope_head_dim": 4,
        "v_head_dim": 8, "intermediate_size": 30, "moe_intermediate_size": 14, "n_routed_experts": 4,
        "n_shared_experts": 1, "num_experts_per_tok": 2, "mlp_layer_types": ["dense", "sparse", "sparse"],
        "index_n_heads": 2, "index_head_dim": 6, "index_topk": 5, "gated_norm_rank": 3, "vocab_size": 70}


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path).overrides


def test_the_q_path_and_the_gated_norms_by_weight_shapes(tmp_path):
    o = _load(tmp_path, FILE)
    assert o["mla_q_latent_concat"] and o["attention_output_gate"] and o["gated_norm_rank"] == 3
    b = maxflops.count(maxflops.model_config(**o, mode="prefill", max_target_length=1, per_device_batch_size=1))
    D, H, ql, kl, qk, v, r = 40, 4, 12, 10, 10, 8, 3
    # per token: q_a_proj D -> ql, q_gate_proj 2 ql -> H (qk + v), kv_a D -> kl + rope, kv_b kl -> H (nope + v)
    assert b.components["qkv_proj"] == 3 * 2 * (D * ql + 2 * ql * H * (qk + v) + D * (kl + 4) + kl * H * (6 + v))
    # the input norm's gate on the three layers, the FFN norm's on the two MoE layers: D -> r -> D each
    assert b.components["norm_gate"] == (3 + 2) * 2 * (D * r + r * D)


@pytest.mark.parametrize("value", [None, 0])
def test_no_q_latent_is_refused(tmp_path, value):
    with pytest.raises(ValueError, match="q_lora_rank"):
        _load(tmp_path, {**FILE, "q_lora_rank": value})


def test_the_peers_conventions_refuse_its_forms():
    with pytest.raises(ValueError, match="'convention'"):
        maxflops.model_config(attention_type="mla", q_lora_rank=8, mla_q_latent_concat=True, convention="megatron")
    with pytest.raises(ValueError, match="'convention'"):
        maxflops.model_config(gated_norm_rank=4, convention="maxtext")
