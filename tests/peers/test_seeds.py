"""The published figures of the three seed pull requests, reproduced under their projects' conventions."""

import pytest

import maxflops

# Seed 2 (MaxText, "Add flops calculation for DeepSeek v3.2"): total TFLOPs per device per train step and the
# learnable / attention split it prints.
# The printed TFLOPs are whole FLOP counts (593.272422531072 TFLOPs = 593,272,422,531,072 FLOPs), so they are
# compared exactly.
MAXTEXT = [
    ("deepseek2-16b", dict(per_device_batch_size=4, max_target_length=8192), 593_272_422_531_072, "81.24", "18.76"),
    ("deepseek3.2-671b", dict(per_device_batch_size=4, max_target_length=4096, index_topk=2048),
     4_162_712_368_054_272, "88.50", "11.50"),
    ("deepseek3.2-671b", dict(per_device_batch_size=4, max_target_length=4096, use_sparse_indexer=False),
     4_103_370_952_409_088, "87.74", "12.26"),
]


@pytest.mark.parametrize("name,kw,total,learn_pct,attn_pct", MAXTEXT)
def test_maxtext_seed_figures(name, kw, total, learn_pct, attn_pct):
    cfg = maxflops.load_config(name, convention="maxtext", **kw)
    assert maxflops.count(cfg).total == total
    t, learn, attn = maxflops.calculate_tflops_training_per_device(cfg, log=False)
    assert t == total / 1e12
    assert (f"{100 * learn / t:.2f}", f"{100 * attn / t:.2f}") == (learn_pct, attn_pct)


# Seed 1 (Megatron-LM, DSA top-k + indexer for GLM-5.2): GFLOPs per token, BSHD, with the indexer off
# ("before": the plain MLA branch) and on ("after").
MEGATRON = {4096: ("280.9", "275.3"), 32768: ("503.6", "290.0"), 131072: ("1267.0", "317.3"),
            262144: ("2284.9", "352.9")}


@pytest.mark.parametrize("length", MEGATRON)
def test_megatron_seed_figures(length):
    cfg = maxflops.load_config("glm5", convention="megatron", max_target_length=length)
    before = maxflops.count(cfg, use_sparse_indexer=False).per_token / 1e9
    after = maxflops.count(cfg).per_token / 1e9
    assert (f"{before:.1f}", f"{after:.1f}") == MEGATRON[length]


def test_megatron_glm5_constant_part_by_hand():
    # Per token, indexer off, at s=4096 (Megatron's form, 6 = 3 passes x 2 FLOPs per multiply-add):
    #  attention projections over 79 layers (78 + MTP), with the '+1' norm terms:
    #    q  = 2048*(6144 + 64*256 + 1) = 46,139,392;  kv = 512*(6144 + 64*448 + 1) + 6144*64 = 18,219,520
    #    o  = 64*256*6144 = 100,663,296
    #  FFN: 3 dense (3*6144*12288) and 76 MoE layers (8 routed + 1 shared, 3*6144*2048 each), no router
    #  MTP: 3h + 2h^2; logits: h*V for the main head and the MTP head; core attention: s/2 pairs per token
    #  (half the square), 64 heads x (2*256 for QK^T + 2*256 for PV) FLOPs per pair, 3 passes, 79 layers
    h, V, s = 6144, 154880, 4096
    proj = 46_139_392 + 18_219_520 + 100_663_296
    ffn = 3 * (3 * h * 12288) + 76 * 9 * (3 * h * 2048)
    per_token = 6 * (79 * proj + ffn + (3 * h + 2 * h * h) + 2 * h * V) + 3 * 79 * 64 * (2 * 256 + 2 * 256) * s // 2
    cfg = maxflops.load_config("glm5", convention="megatron", max_target_length=s, use_sparse_indexer=False)
    b = maxflops.count(cfg)
    assert b.total == per_token * s


def test_seed3_sliding_window_in_a_model():
    # Seed 3: one Gemma-3-like layer, window 512, 2048 tokens: 917,760 pairs per head, not 2048*512/2.
    cfg = maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="L", sliding_window_size=512,
                                max_target_length=2048, mode="prefill", num_query_heads=8, num_kv_heads=8,
                                head_dim=128)
    assert maxflops.count(cfg).components["core_attention"] == 917_760 * 8 * (2 * 128 + 2 * 128)
    megatron = maxflops.count(cfg, convention="megatron", mode="train").components["core_attention"]
    assert megatron == 3 * 2048 * 512 // 2 * 8 * (2 * 128 + 2 * 128)  # the seed's own rule (a train step)
    with pytest.raises(ValueError, match="'megatron' reproduces that project's training FLOPs function"):
        maxflops.count(cfg, convention="megatron")  # prefill: Megatron's formula does not define it


def test_megatron_windows_apply_to_every_attention_layer():
    """Megatron's seed rule (#3128): the chunk if set, else the window (min(L, W)), for every attention layer,
    causal-halved: L * min(L, W) / 2 pairs per layer, whatever the layer pattern says."""
    L = 131072
    for name in ("gpt-oss-120b", "gemma3-27b"):
        cfg = maxflops.load_config(name, max_target_length=L, convention="megatron")
        c = maxflops.config.validate(cfg)
        per_pair = 2 * c["num_query_heads"] * c["head_dim"] * 2  # QK^T and PV
        want = 3 * c["num_decoder_layers"] * (L * min(L, c["sliding_window_size"]) // 2) * per_pair
        assert maxflops.count(cfg).components["core_attention"] == want
    assert round(maxflops.count(maxflops.load_config("gpt-oss-120b", max_target_length=L,
                                                     convention="megatron")).per_token / 1e9, 2) == 30.82
    llama4 = maxflops.load_config("llama4-17b-128e", max_target_length=L, convention="megatron")
    c = maxflops.config.validate(llama4)
    want = 3 * c["num_decoder_layers"] * (L * c["chunk_attn_window_size"] // 2) * 4 * c["num_query_heads"] * c["head_dim"]
    assert maxflops.count(llama4).components["core_attention"] == want


def test_megatron_gated_delta_net_conv_is_the_full_kernel_and_no_shared_gate():
    cfg = maxflops.load_config("qwen3-next-80b-a3b", max_target_length=4096, convention="megatron")
    c = maxflops.config.validate(cfg)
    nk, nv, dk, dv, K = (c[k] for k in ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim",
                                        "gdn_value_head_dim", "gdn_conv_kernel_dim"))
    gdn_layers = sum(1 for i in range(c["num_decoder_layers"])
                     if c["attention_layer_pattern"][i % len(c["attention_layer_pattern"])] == "D")
    b = maxflops.count(cfg)
    assert b.components["gdn_conv"] == 3 * gdn_layers * 4096 * K * 2 * (2 * nk * dk + nv * dv)
    exact = maxflops.count(cfg, convention="exact")
    shared_gate = 2 * c["emb_dim"] * 4096 * 3 * c["num_decoder_layers"]  # D -> 1 on every (MoE) layer, 3x
    assert exact.components["moe_shared"] - b.components["moe_shared"] == shared_gate
    assert b.components["qkv_proj"] == exact.components["qkv_proj"]  # the attention output gate is counted


def test_megatron_numbers_mtp_layers_after_the_decoder():
    """Megatron's MTP layer k is layer num_layers + k: on a hybrid its mixer follows the pattern there (qwen3-next:
    48 layers of 'DDDG', so layer 49 is a gated-delta-net layer); index reuse numbers it the same way."""
    cfg = maxflops.load_config("qwen3-next-80b-a3b", max_target_length=4096, mtp_num_layers=1)
    mixers = {conv: [r.mixer for r in maxflops.count(cfg, convention=conv).layers if r.group == "mtp"]
              for conv in ("exact", "megatron")}
    assert mixers == {"exact": ["global"], "megatron": ["gdn"]}
    own = maxflops.count(cfg, convention="megatron", mtp_layer_numbering="own")
    assert [r.mixer for r in own.layers if r.group == "mtp"] == ["global"]
