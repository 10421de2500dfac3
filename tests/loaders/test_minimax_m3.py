"""MiniMax-M3: MiniMax's own checkpoint file (model_type minimax_m3, remote code) read as transformers'
MiniMaxM3VLTextConfig reads it (its legacy sparse_attention_config and moe_layer_freq), equal to the same model saved
by transformers (layer_types, mlp_layer_types, index_* fields); the checkpoint's keys transformers does not read,
refused by name where the model they describe is not the one transformers builds. The eager model is held in the zoo
(tests/loaders/test_hf_zoo.py: minimax_m3_vl_text and minimax_m3_vl, forward and training exact)."""

from __future__ import annotations

import json

import pytest

import maxflops
from maxflops.loaders import NOT_UNDERSTOOD, load_hf_config

N = 6
CHECKPOINT = {  # MiniMax-M3's published file at six layers (the published file has 60: 3 dense, 57 sparse)
    "model_type": "minimax_m3", "architectures": ["MiniMaxM3ForCausalLM"], "hidden_size": 96, "num_hidden_layers": N,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 300, "hidden_act": "swigluoai",
    "intermediate_size": 24, "moe_intermediate_size": 24, "dense_intermediate_size": 80, "shared_intermediate_size": 24,
    "num_local_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 2,
    "moe_layer_freq": [0, 0, 1, 1, 1, 1], "num_mtp_modules": 3, "num_nextn_predict_layers": 1,
    "attention_output_gate": False, "qk_norm_type": "per_head", "use_gemma_norm": True, "use_qk_norm": True,
    "use_routing_bias": True, "scoring_func": "sigmoid", "routed_scaling_factor": 2.0, "swiglu_alpha": 1.702,
    "swiglu_limit": 7.0, "rotary_dim": 8, "partial_rotary_factor": 0.5,
    "sparse_attention_config": {
        "use_sparse_attention": True, "sparse_attention_freq": [0, 0, 1, 1, 1, 1],
        "sparse_disable_index_value": [0, 0, 1, 1, 1, 1], "sparse_block_size": 4, "sparse_topk_blocks": 3,
        "sparse_local_block": 1, "sparse_init_block": 0, "sparse_index_dim": 12, "sparse_num_index_heads": 2,
        "sparse_score_type": "max"},
}
SAVED = {  # the same model as transformers saves it
    "model_type": "minimax_m3_vl_text", "hidden_size": 96, "num_hidden_layers": N, "num_attention_heads": 8,
    "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 300, "intermediate_size": 24,
    "dense_intermediate_size": 80, "shared_intermediate_size": 24, "num_local_experts": 8, "num_experts_per_tok": 2,
    "layer_types": ["full_attention"] * 2 + ["minimax_m3_sparse"] * 4, "mlp_layer_types": ["dense"] * 2 + ["sparse"] * 4,
    "index_n_heads": 2, "index_head_dim": 12, "index_block_size": 4, "index_topk_blocks": 3, "index_local_blocks": 1,
}


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path)


def test_the_checkpoint_reads_as_transformers_saves_it(tmp_path):
    ckpt, saved = _load(tmp_path, CHECKPOINT), _load(tmp_path, SAVED)
    assert NOT_UNDERSTOOD not in ckpt.ignored.values()
    o = ckpt.overrides
    assert o["attention_layer_pattern"] == "GGBBBB" and o["first_num_dense_layers"] == 2
    assert (o["msa_block_size"], o["msa_topk_blocks"], o["msa_local_blocks"]) == (4, 3, 1)
    assert (o["index_n_heads"], o["index_head_dim"], o["mlp_dim"], o["moe_mlp_dim"]) == (2, 12, 80, 24)
    assert o["shared_experts"] == 1 and "shared_expert_mlp_dim" not in o
    # the checkpoint's MTP modules (transformers builds none: its file carries none)
    assert o.pop("mtp_num_layers") == 3 and "mtp_num_layers" not in saved.overrides
    assert "num_nextn_predict_layers" in ckpt.ignored
    assert o == saved.overrides
    for mode in ("prefill", "train", "decode"):
        assert maxflops.count(maxflops.model_config(**o, mode=mode)).total == \
            maxflops.count(maxflops.model_config(**saved.overrides, mode=mode)).total


def test_the_published_file_loads(tmp_path):
    from test_hf_published import HF_REAL

    path = HF_REAL / "minimax-m3" / "config.json"
    if not path.is_file():
        pytest.skip("../shared/hf-real (real published config.json files) is absent")
    o = load_hf_config(path).overrides
    assert o["attention_layer_pattern"] == "GGG" + "B" * 57 and o["first_num_dense_layers"] == 3
    assert (o["msa_block_size"], o["msa_topk_blocks"], o["index_n_heads"], o["index_head_dim"]) == (128, 16, 4, 128)
    L = 32768
    b = maxflops.count(maxflops.model_config(**o, mode="prefill", max_target_length=L))
    # 3 dense layers over the causal pairs; 57 sparse ones where a query past 16 blocks attends 15 x 128 keys and its
    # own block's; their indexers score every causal pair (4 heads of 128)
    per_pair = 4 * 64 * 128
    sparse = sum(p + 1 if p < 16 * 128 else p % 128 + 1 + 15 * 128 for p in range(L))  # query by query
    assert b.components["core_attention"] == per_pair * (3 * L * (L + 1) // 2 + 57 * sparse)
    assert b.components["indexer_score"] == 57 * 2 * 4 * 128 * L * (L + 1) // 2


@pytest.mark.parametrize("change, key", [
    (dict(sparse_attention_config=dict(CHECKPOINT["sparse_attention_config"], use_sparse_attention=False)),
     "use_sparse_attention"),
    (dict(sparse_attention_config=dict(CHECKPOINT["sparse_attention_config"],
                                       sparse_disable_index_value=[0, 0, 1, 0, 1, 1])), "index-value branch"),
    (dict(sparse_attention_config=dict(CHECKPOINT["sparse_attention_config"], sparse_local_block=4)), "local blocks"),
    (dict(sparse_attention_config=dict(CHECKPOINT["sparse_attention_config"], sparse_init_block=3)),
     "sparse_init_block"),
    (dict(sparse_attention_config=dict(CHECKPOINT["sparse_attention_config"], sparse_window=64)), "sparse_window"),
    (dict(sparse_attention_config=dict(CHECKPOINT["sparse_attention_config"], sparse_attention_freq=[1, 0])),
     "sparse_attention_freq"),
    (dict(n_shared_experts=2), "n_shared_experts"),
    (dict(moe_intermediate_size=32), "moe_intermediate_size"),
    (dict(first_k_dense_replace=3), "first_k_dense_replace"),
    (dict(attention_output_gate=True), "attention_output_gate"),
    (dict(mtp_transformer_layers=2), "mtp_transformer_layers"),
])
def test_a_checkpoint_key_that_describes_another_model_is_refused_by_name(tmp_path, change, key):
    with pytest.raises(ValueError, match=key):
        _load(tmp_path, {**CHECKPOINT, **change})


def test_no_class_default_stands_in_for_a_checkpoint_key(tmp_path):
    data = dict(CHECKPOINT)
    del data["shared_intermediate_size"]
    with pytest.raises(ValueError, match="shared_intermediate_size.*required"):
        _load(tmp_path, data)
    assert "mtp_num_layers" not in _load(tmp_path, {**CHECKPOINT, "use_mtp": False}).overrides
