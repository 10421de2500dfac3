"""Reformer (reformer): ReformerConfig read as ReformerModelWithLMHead builds it. The hash width of an unset
num_buckets held to the choice transformers' own layer made in the zoo's run (the saved file carries it), the keys the
language model asserts refused by name, the reversible layers and the two-stream head. Exact against torch forward and
training in the zoo (tests/loaders/test_hf_zoo.py)."""

from __future__ import annotations

import json
import math

import pytest
from repo import ROOT

import maxflops
from maxflops.families.reformer import hash_width
from maxflops.loaders import load_hf_config

ZOO = json.loads((ROOT / "tests" / "fixtures" / "hf_zoo" / "cases.json").read_text())["cases"]["reformer"]


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path)


def _count(overrides, mode):
    return maxflops.count(maxflops.model_config(**overrides, mode=mode, per_device_batch_size=ZOO["batch"],
                                                max_target_length=ZOO["length"], attention_impl="dense"))


def test_an_unset_num_buckets_is_the_one_transformers_set_in_the_zoos_run(tmp_path):
    """The zoo's model was built with num_buckets null; LSHSelfAttention._set_num_buckets set it from the first
    sequence (32 tokens in chunks of 8: 8 buckets) and the saved file carries it. Read null, the count is the same."""
    assert ZOO["config"]["num_buckets"] == 8
    saved = _load(tmp_path, ZOO["config"]).overrides
    unset = _load(tmp_path, {**ZOO["config"], "num_buckets": None}).overrides
    assert saved["lsh_hash_width"] == 4 and "lsh_hash_width" not in unset
    for mode, want in (("prefill", ZOO["total_flops"]), ("train", ZOO["train_flops"])):
        assert _count(unset, mode).hardware_flops == _count(saved, mode).hardware_flops == want


@pytest.mark.parametrize("C,positions", [(8, 4096), (2, 16), (64, 524288), (3, 1000)])
def test_the_rule_for_an_unset_num_buckets(C, positions):
    """transformers' _set_num_buckets, step by step: 2^p buckets, p the bit length of 2 (L // C) less one; above
    2 max(int(sqrt(max_position_embeddings // C)), C) two factors 2^(p // 2) and 2^(p - p // 2); the hash reads
    half the rotation size (the buckets, or the factors' sum)."""
    c = maxflops.model_config(attention_layer_pattern="E", lsh_chunk_length=C, lsh_max_positions=positions)
    for L in range(C + 1, 40 * C, C):
        p = len(bin(2 * (L // C))) - 3
        buckets = 2 ** p
        if buckets > 2 * max(int(math.sqrt(positions // C)), C):
            buckets = [2 ** (p // 2), 2 ** (p - p // 2)]
        want = (sum(buckets) if isinstance(buckets, list) else buckets) // 2
        assert hash_width(c, L) == want, L
    assert hash_width(c, C * 7) == hash_width(c, __import__("numpy").array([C * 7]))[0]


def test_bucket_counts_as_the_hash_reads_them(tmp_path):
    base = {**ZOO["config"]}
    assert _load(tmp_path, {**base, "num_buckets": [4, 8]}).overrides["lsh_hash_width"] == 6
    assert _load(tmp_path, {**base, "num_buckets": 16}).overrides["lsh_hash_width"] == 8


def test_the_model_it_reads(tmp_path):
    o = _load(tmp_path, ZOO["config"]).overrides
    assert o["attention_layer_pattern"] == "OE" and o["num_decoder_layers"] == 2
    assert o["remat_policy"] == "reversible" and o["head_input_dim"] == 2 * o["emb_dim"]
    assert o["num_kv_heads"] == o["num_query_heads"] == 4 and o["mlp_activations"] == ("relu",)
    only_lsh = _load(tmp_path, {**ZOO["config"], "attn_layers": ["lsh", "lsh", "lsh"]})
    assert only_lsh.overrides["attention_layer_pattern"] == "EEE" and "local_chunk_length" not in only_lsh.overrides
    assert only_lsh.ignored["local_attn_chunk_length"] == "unused: no 'local' layers"


@pytest.mark.parametrize("change, match", [
    (dict(is_decoder=False), "'is_decoder' = False: ReformerModelWithLMHead asserts"),
    (dict(lsh_num_chunks_after=1), "'lsh_num_chunks_after' = 1: ReformerModelWithLMHead asserts"),
    (dict(local_num_chunks_after=2), "'local_num_chunks_after' = 2"),
    (dict(attn_layers=["lsh", "global"]), "'global' is not a Reformer attention"),
    (dict(num_buckets=7), "'num_buckets' = 7: every bucket count"),
    (dict(num_buckets=[4, 3]), "'num_buckets'"),
    (dict(axial_pos_embds_dim=[16, 16]), "'axial_pos_embds_dim'.*sums to 32, not hidden_size=40"),
])
def test_what_the_language_model_refuses_is_refused_by_name(tmp_path, change, match):
    with pytest.raises(ValueError, match=match):
        _load(tmp_path, {**ZOO["config"], **change})


def test_the_class_defaults_are_an_encoder(tmp_path):
    """ReformerConfig() has is_decoder false: the masked-LM encoder's config, not a language model's."""
    with pytest.raises(ValueError, match="is_decoder"):
        _load(tmp_path, {"model_type": "reformer"})
    o = _load(tmp_path, {"model_type": "reformer", "is_decoder": True}).overrides
    assert o["attention_layer_pattern"] == "OEOEOE" and o["lsh_max_positions"] == 4096
    b = maxflops.count(maxflops.model_config(**o, max_target_length=4096, per_device_batch_size=1))
    assert b.hardware_flops > b.total  # (reversible layers: every layer's forward again)
