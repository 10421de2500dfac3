"""Zamba's shared block (Zamba2's, and Zamba 1's with no adapters and a head width of its own): the engine's model FLOPs against the block's weight shapes and an enumeration of its
causal pairs; the reference kernel's XLA count against the hardware figure (forward and train); a hybrid layer as
the block then a Mamba-2 mixer."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from repo import quiet_config

RNG = np.random.default_rng(0)


def _config(D, H, I, r, adapters, Hkv=None, hd=0, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="Z", ffn_layer_pattern="-",
                                 emb_dim=D, vocab_size=8, num_query_heads=H, num_kv_heads=Hkv or H, zamba_mlp_dim=I,
                                 zamba_adapter_rank=r, zamba_attention_adapters=adapters, zamba_head_dim=hd, **kw)


@pytest.mark.parametrize("D,H,Hkv,hd,I,r,adapters,docs", [
    (8, 4, 4, 0, 12, 3, True, [7]), (6, 3, 3, 0, 10, 2, False, [1, 5, 4]), (10, 5, 5, 0, 16, 0, False, [9]),
    (10, 4, 2, 0, 16, 0, False, [3, 6]), (7, 3, 1, 5, 9, 0, False, [8])])  # Zamba 1: GQA, its own head width
def test_model_flops_from_weight_shapes_and_enumerated_pairs(D, H, Hkv, hd, I, r, adapters, docs):
    hd = hd or 2 * D // H
    weights = ([(2 * D, H * hd)] + [(2 * D, Hkv * hd)] * 2 + [(H * hd, D)] + [(D, 2 * I), (D, r), (r, 2 * I), (I, D)]
               + [(D, D)])
    if adapters:
        weights += [(2 * D, r), (r, H * hd)] * 3
    tokens = sum(docs)
    pairs = sum(1 for L in docs for i in range(L) for j in range(L) if j <= i)
    b = maxflops.count(_config(D, H, I, r, adapters, Hkv, hd if hd != 2 * D // H else 0, mode="prefill",
                               max_target_length=tokens), segment_lengths=docs)
    assert b.total - b.components["logits"] == sum(2 * a * c for a, c in weights) * tokens + 2 * H * 2 * hd * pairs
    assert b.hardware_flops == b.total


def test_a_hybrid_layer_is_the_block_then_mamba():
    kw = dict(emb_dim=16, vocab_size=8, num_query_heads=4, num_kv_heads=4, zamba_mlp_dim=24, zamba_adapter_rank=3,
              mamba_num_heads=4, mamba_head_dim=8, mamba_n_groups=1, mamba_state_dim=4, max_target_length=12)
    both = maxflops.count(maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="ZM",
                                                ffn_layer_pattern="-", **kw))
    alone = [maxflops.count(quiet_config(num_decoder_layers=1, attention_layer_pattern=a,
                                                  ffn_layer_pattern="-", **kw)) for a in "ZM"]
    head = both.components["logits"]
    assert both.total == sum(b.total - head for b in alone) + head
    t = maxflops.decode_traffic(quiet_config(num_decoder_layers=1, attention_layer_pattern="Z",
                                                      ffn_layer_pattern="-", mode="decode", decode_kv_length=9,
                                                      per_device_batch_size=2, kv_cache_bytes=2, **{
                                                          k: v for k, v in kw.items() if k != "max_target_length"}))
    assert t.components["kv_write"] == 2 * 2 * (2 * 4 * 8) and t.components["kv_read"] == 2 * 10 * 2 * (2 * 4 * 8)


def test_bad_shapes_name_their_key():
    with pytest.raises(ValueError, match="'num_query_heads': 3 does not divide"):
        _config(8, 3, 12, 0, False)
    assert _config(8, 3, 12, 0, False, hd=4)["zamba_head_dim"] == 4  # a head width of its own: no division
    with pytest.raises(ValueError, match="'zamba_attention_adapters'"):
        maxflops.model_config(attention_layer_pattern="Z", ffn_layer_pattern="-", emb_dim=8, num_query_heads=4,
                              num_kv_heads=2, zamba_mlp_dim=8, zamba_adapter_rank=2, zamba_attention_adapters=True)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl,adapters,Hkv,hd", [("ideal", True, 4, 0), ("dense", False, 4, 0),
                                                  ("blocked", True, 4, 0), ("blocked", False, 2, 5)])
def test_xla_counts_the_block_as_the_engine_prices_it(impl, adapters, Hkv, hd, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.zamba.proof import params, zamba_block
    from maxflops.xla.hlo import count_lowered

    B, L, D, H, I, r = 2, 9, 8, 4, 12, 3
    prm = params(lambda name, shape: jnp.asarray(RNG.normal(size=shape) * 0.3, jnp.float32), D, H, Hkv, I, r,
                 adapters, hd)
    x, e = (jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32) for _ in range(2))
    fn = lambda p, x, e: zamba_block(p, x, e, H, Hkv, adapters, impl, 4, 3)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x, e: jnp.sum(zamba_block(p, x, e, H, Hkv, adapters, impl, 4, 3) ** 2),
                      argnums=(0, 1, 2))
    names = ["qkv_proj", "core_attention", "out_proj", "mlp", "block_linear"]
    got = count_lowered(fn, prm, x, e).by_scope(names)
    b = maxflops.count(_config(D, H, I, r, adapters, Hkv, hd, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B, attention_impl=impl, attention_block_q=4,
                               attention_block_kv=3))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}
