"""HBM bytes of a decode step (maxflops.decode_traffic) against weight shapes and enumerated cache reads."""

import math

import numpy as np
import pytest

import maxflops
from repo import quietly_inert
from maxflops.config import validate

from shapes import indexer_weights, layer_weights


def weights_by_shape(name, batch):
    """Bytes (bfloat16) of the weights one decode step multiplies by, from the weight shapes: every layer's, with
    the experts a batch of ``batch`` new tokens can reach (k per token, at most all of them), and the output head."""
    c = validate(maxflops.load_config(name))
    pattern, total = c["attention_layer_pattern"], 0
    for l in range(c["num_decoder_layers"]):
        moe = c["num_experts"] > 1 and l >= c["first_num_dense_layers"] and (l + 1) % c["interleave_moe_layer_step"] == 0
        letter = pattern[l % len(pattern)]
        shapes = layer_weights(c, letter, moe, True, active=False)
        if moe:  # keep the experts reached
            reached = min(c["num_experts"], batch * c["num_experts_per_tok"])
            shapes = [(n, s) for n, s in shapes if not n.startswith("expert") or int(n[6:].split(".")[0]) < reached]
        total += sum(math.prod(s) for _, s in shapes)
        if c["use_sparse_indexer"] and (letter == "S" or letter == "G" and c["attention_type"] == "mla"):
            total += sum(math.prod(s) for _, s in indexer_weights(c))
        if letter == "D":  # the conv's kernel: one K-tap filter per channel
            ch = 2 * c["gdn_num_key_heads"] * c["gdn_key_head_dim"] + c["gdn_num_value_heads"] * c["gdn_value_head_dim"]
            total += ch * c["gdn_conv_kernel_dim"]
    total += c["vocab_size"] * c["emb_dim"]  # the output head (the embedding table is read a row per token)
    if c["mhc_hyper_head"]:
        total += c["mhc_expansion_rate"] ** 2 * c["emb_dim"]
    return 2 * total


@pytest.mark.parametrize("name", ["llama3.1-8b", "mixtral-8x7b", "deepseek3.2-671b", "qwen3-next-80b-a3b",
                                  "deepseek4-284b", "gemma3-27b"])
@pytest.mark.parametrize("batch", [1, 64])
def test_weights_streamed_equal_the_weight_shapes(name, batch):
    cfg = maxflops.load_config(name, per_device_batch_size=batch)
    t = maxflops.decode_traffic(cfg, decode_kv_length=100)
    assert t.components["weights"] == weights_by_shape(name, batch)
    assert t.components["embeddings"] == batch * cfg.emb_dim * 2


SMALL = dict(model_name="traffic", num_decoder_layers=4, emb_dim=48, vocab_size=100, num_query_heads=6,
             num_kv_heads=3, head_dim=10, mlp_dim=64, attention_layer_pattern="LGCG", sliding_window_size=5,
             chunk_attn_window_size=4, per_device_batch_size=3)
KV = [0, 4, 13]


def visible(mixer, span, kv):
    """Cache positions the new token at position kv attends, itself included (enumerated)."""
    j = np.arange(kv + 1)
    if mixer == "L":
        return int((j > kv - span).sum())
    if mixer == "C":
        return int((j // span == kv // span).sum())
    return kv + 1


def test_kv_cache_reads_and_writes_enumerated():
    t = maxflops.decode_traffic(maxflops.model_config(**SMALL), segment_lengths=KV, kv_cache_bytes=1)
    spans = {"L": 5, "C": 4, "G": 0}
    entry = 2 * 3 * 10  # K and V of 3 heads of 10
    read = sum(visible(letter, spans[letter], kv) for letter in "LGCG" for kv in KV) * entry
    assert t.components["kv_read"] == read
    assert t.components["kv_write"] == 4 * len(KV) * entry
    assert t.components["index_read"] == t.components["state"] == 0


def test_mla_and_dsa_read_the_latent_and_the_index_keys():
    cfg = quietly_inert(lambda: maxflops.model_config(  # (SMALL's window is inert on an all-global pattern)
        **{**SMALL, "attention_layer_pattern": "G", "num_kv_heads": 6}, attention_type="mla", q_lora_rank=16,
        kv_lora_rank=12, qk_nope_head_dim=6, qk_rope_head_dim=4, v_head_dim=8, use_sparse_indexer=True,
        index_n_heads=2, index_head_dim=7, index_topk=5, index_topk_freq=2, index_skip_offset=1))
    t = maxflops.decode_traffic(cfg, segment_lengths=KV, index_cache_bytes=1, kv_cache_bytes=2)
    latent = 12 + 4
    topk = sum(min(len(np.arange(kv + 1)), 5) for kv in KV)
    assert t.components["kv_read"] == 4 * topk * latent * 2
    # layers 1 and 3 (1-based) compute their own top-k: each scores every cached key and the new one
    assert t.components["index_read"] == 2 * sum(kv + 1 for kv in KV) * 7
    assert t.components["index_write"] == 2 * len(KV) * 7


def test_compressed_layers_read_window_and_blocks():
    cfg = maxflops.load_config("deepseek4-284b")
    c = validate(cfg)
    m_c, m_h, W, K, hd = c["csa_compress_ratio"], c["hca_compress_ratio"], c["sliding_window_size"], c["index_topk"], \
        c["head_dim"]
    kvs = [3, 127, 128, 5000]
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs, kv_cache_bytes=1, index_cache_bytes=1, per_device_batch_size=4)
    pattern = c["attention_layer_pattern"][:c["num_decoder_layers"]]
    read = write = index = 0
    for letter in pattern:
        for kv in kvs:
            window = int((np.arange(kv + 1) > kv - W).sum())
            m = {"S": m_c, "H": m_h}.get(letter)
            blocks = int(sum(1 for b in range(kv + 1) if m and (b + 1) * m - 1 <= kv))
            read += (window + (min(blocks, K) if letter == "S" else blocks)) * hd
            write += hd * (1 + (1 if m and (kv + 1) % m == 0 else 0))
            index += blocks * c["index_head_dim"] if letter == "S" else 0
    assert (t.components["kv_read"], t.components["kv_write"], t.components["index_read"]) == (read, write, index)


def test_gated_delta_net_state():
    cfg = maxflops.load_config("qwen3-next-80b-a3b", per_device_batch_size=2)
    c = validate(cfg)
    t = maxflops.decode_traffic(cfg, decode_kv_length=1000)
    nv, dk, dv, K = c["gdn_num_value_heads"], c["gdn_key_head_dim"], c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"]
    ch = 2 * c["gdn_num_key_heads"] * dk + nv * dv
    gdn_layers = c["attention_layer_pattern"].count("D") * c["num_decoder_layers"] // len(c["attention_layer_pattern"])
    assert t.components["state"] == gdn_layers * 2 * 2 * (nv * dk * dv + (K - 1) * ch) * 4


def test_decode_traffic_takes_any_config_and_checks_it():
    cfg = maxflops.model_config(**SMALL)
    assert maxflops.decode_traffic(cfg).total == maxflops.decode_traffic(cfg, mode="decode").total
    with pytest.raises(ValueError, match="kv_cache_bytes"):
        maxflops.decode_traffic(cfg, kv_cache_bytes=0)
    assert maxflops.decode_traffic(cfg).to_dict()["total"] == maxflops.decode_traffic(cfg).total


def test_the_decode_report_shows_the_traffic(capsys):
    import json

    from maxflops import cli

    assert cli.main(["maxflops", "--model=llama3.1-8b", "--config.mode=decode", "--config.decode_kv_length=4096"]) == 0
    out = capsys.readouterr().out
    t = maxflops.decode_traffic(maxflops.load_config("llama3.1-8b", mode="decode", decode_kv_length=4096))
    assert f"HBM GB per device per step: {t.total / 1e9:,.3f}" in out
    assert cli.main(["maxflops", "--model=llama3.1-8b", "--config.mode=decode", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["decode_traffic"]["components"]["weights"] == weights_by_shape(
        "llama3.1-8b", 1)
    assert cli.main(["maxflops", "--model=llama3.1-8b"]) == 0
    assert "HBM" not in capsys.readouterr().out
