"""Inkling's parts (relative_logits_dim / _extent, kv_conv_kernel, residual_conv_kernel, moe_router_shared): each
component against its enumeration token by token (packed documents and decode included); refused under the peers'
conventions and off GQA; the Flax model equal to XLA (tests/xla/test_xla_model.py); inkling_text exact against torch
forward and training (the zoo)."""

from __future__ import annotations

import pytest

import maxflops
from repo import quietly_inert

KW = dict(num_decoder_layers=2, attention_layer_pattern="LG", emb_dim=24, mlp_dim=40, num_query_heads=4,
          num_kv_heads=2, head_dim=6, vocab_size=50, sliding_window_size=5, relative_logits_dim=3,
          relative_logits_extent=11, kv_conv_kernel=3, residual_conv_kernel=4, num_experts=4, num_experts_per_tok=2,
          moe_mlp_dim=10, shared_experts=2, moe_router_shared=True, layer_widths=("head_dim@0=8",))


def taps(tokens_of_docs, K):
    """Non-padding taps of a causal conv of K over each document, token by token."""
    return sum(min(t + 1, K) for L in tokens_of_docs for t in range(L))


@pytest.mark.parametrize("docs", [[9], [3, 7, 1], [12, 12]])
def test_each_part_is_its_enumeration(docs):
    b = maxflops.count(maxflops.model_config(**KW, mode="prefill", max_target_length=sum(docs)),
                       segment_lengths=docs)
    T, H, d_rel, D = sum(docs), 4, 3, 24
    # per token: each head's d_rel vector against the profiles over the extent (the window, 5, on the sliding
    # layer; 11 on the global one)
    assert b.components["rel_logits"] == T * 2 * H * d_rel * (5 + 11)
    # k and v convs: 2 KV heads x (8 on layer 0, 6 on layer 1) for k and v, 3 taps back
    assert b.components["kv_conv"] == 2 * taps(docs, 3) * (2 * 8 * 2 + 2 * 6 * 2)
    # the convs over the attention's and the FFN's outputs: D channels each, two per layer, 4 taps
    assert b.components["residual_conv"] == 2 * taps(docs, 4) * D * 2 * 2
    # the router scores 4 routed and 2 shared experts
    assert b.components["moe_router"] == 2 * T * 2 * D * (4 + 2)
    # r_proj D -> heads x d_rel in the projections
    plain = maxflops.count(quietly_inert(lambda: maxflops.model_config(  # (relative_logits_extent then inert)
        **{**KW, "relative_logits_dim": 0}, mode="prefill", max_target_length=sum(docs))), segment_lengths=docs)
    assert b.components["qkv_proj"] - plain.components["qkv_proj"] == 2 * T * 2 * D * H * d_rel


@pytest.mark.parametrize("kvs", [[0, 2], [7]])
def test_decode_is_the_next_tokens_taps(kvs):
    b = maxflops.count(maxflops.model_config(**KW, mode="decode", per_device_batch_size=len(kvs)),
                       segment_lengths=kvs)
    assert b.components["kv_conv"] == 2 * sum(min(kv + 1, 3) for kv in kvs) * (2 * 8 * 2 + 2 * 6 * 2)
    assert b.components["residual_conv"] == 2 * sum(min(kv + 1, 4) for kv in kvs) * 24 * 2 * 2
    t = maxflops.decode_traffic(maxflops.model_config(**KW, mode="decode", state_bytes=2,
                                                      per_device_batch_size=len(kvs)), segment_lengths=kvs)
    # each conv's last K - 1 inputs at 2 bytes, read and written, per sequence: k and v over 2 x (8 + 8) and
    # 2 x (6 + 6) channels, 2 inputs; the branches' over 2 x 2 x 24 channels, 3 inputs
    assert t.components["state"] == len(kvs) * 2 * 2 * (2 * (2 * 8 * 2 + 2 * 6 * 2) + 3 * (2 * 2 * 24))


@pytest.mark.parametrize("key", ["relative_logits_dim", "kv_conv_kernel", "residual_conv_kernel",
                                 "moe_router_shared"])
def test_the_peers_have_no_rule(key):
    with pytest.raises(ValueError, match="'convention'"):
        maxflops.model_config(**{"num_experts": 4, "shared_experts": 1, key: 2 if key != "moe_router_shared" else True,
                                 "relative_logits_extent": 4}, convention="megatron")


@pytest.mark.parametrize("key", ["relative_logits_dim", "kv_conv_kernel"])
def test_the_attention_parts_are_gqas(key):
    with pytest.raises(ValueError, match=f"'{key}'"):
        maxflops.model_config(attention_type="mla", relative_logits_extent=4, **{key: 2})


@pytest.mark.parametrize("key, other", [("residual_conv_kernel", dict(mhc_expansion_rate=2)),
                                        ("gated_norm_rank", dict(mhc_expansion_rate=2)),
                                        ("gated_norm_rank", dict(attn_res_block_size=2))])
def test_a_second_residual_scheme_is_refused(key, other):
    with pytest.raises(ValueError, match=f"'{key}'.*not modelled"):
        maxflops.model_config(num_decoder_layers=2, **{key: 3}, **other)
