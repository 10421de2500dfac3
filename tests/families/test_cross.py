"""Cross-attention to image tokens (letter 'X', ``cross_attention_tokens``: Mllama's cross-attention layers): the
engine against a naive layer that counts its own multiply-adds token by token (packed documents, each with its image
tokens, and decode against the cached image keys and values included); the layers idle whole without image tokens
(as transformers' text model skips them); decode bytes; the refusals; the reference kernel and a Flax model equal to
XLA. transformers' eager Mllama is held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from repo import quiet_config
from flaxcheck import engine_and_xla

RNG = np.random.default_rng(0)


class NaiveCross:
    """MllamaTextCrossAttention one text token at a time, then a gated MLP: the image's keys and values projected
    once per sequence, each text token's q against every image token, o_proj. Counts every matmul's multiply-adds."""

    def __init__(self, D, H, Hkv, d, I):
        self.D, self.H, self.Hkv, self.d, self.macs = D, H, Hkv, d, 0
        self.wq, self.wo = RNG.normal(size=(D, H * d)), RNG.normal(size=(H * d, D))
        self.wk, self.wv = RNG.normal(size=(D, Hkv * d)), RNG.normal(size=(D, Hkv * d))
        self.gate_up, self.down = RNG.normal(size=(D, 2 * I)), RNG.normal(size=(I, D))

    def matvec(self, x, w):
        self.macs += w.shape[0] * w.shape[1]
        return x @ w

    def image(self, image):
        return ([self.matvec(y, self.wk).reshape(self.Hkv, self.d) for y in image],
                [self.matvec(y, self.wv).reshape(self.Hkv, self.d) for y in image])

    def forward(self, xs, cache):
        K, V = (np.array(a) for a in cache)
        g = self.H // self.Hkv
        for x in xs:
            q = self.matvec(x, self.wq).reshape(self.H, self.d)
            o = np.zeros((self.H, self.d))
            for h in range(self.H):
                s = K[:, h // g] @ q[h]
                p = np.exp(s - s.max())
                o[h] = (p / p.sum()) @ V[:, h // g]
                self.macs += 2 * len(K) * self.d
            y = self.matvec(o.reshape(-1), self.wo)
            gu = self.matvec(y, self.gate_up)
            self.matvec(gu[:len(gu) // 2] * gu[len(gu) // 2:], self.down)


def _config(D, H, Hkv, d, I, T, layers="X", **kw):
    return maxflops.model_config(num_decoder_layers=len(layers), attention_layer_pattern=layers, emb_dim=D,
                                 num_query_heads=H, num_kv_heads=Hkv, head_dim=d, mlp_dim=I, vocab_size=8,
                                 cross_attention_tokens=T, **kw)


@pytest.mark.parametrize("D,H,Hkv,d,I,T,docs", [(8, 4, 2, 3, 10, 5, [6]), (6, 2, 1, 4, 7, 1, [2, 7, 1]),
                                               (10, 3, 3, 2, 4, 9, [4, 4])])
def test_model_flops_are_the_naive_layers_multiply_adds(D, H, Hkv, d, I, T, docs):
    layer = NaiveCross(D, H, Hkv, d, I)
    for L in docs:  # each document (a sequence) attends its own image tokens
        layer.forward(RNG.normal(size=(L, D)), layer.image(RNG.normal(size=(T, D))))
    tokens = sum(docs)
    b = maxflops.count(_config(D, H, Hkv, d, I, T, mode="prefill", max_target_length=tokens), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * layer.macs
    for impl in ("ideal", "dense", "blocked"):  # the text x image rectangle has no masked tile
        assert maxflops.count(_config(D, H, Hkv, d, I, T, mode="prefill", max_target_length=tokens,
                                      attention_impl=impl, attention_block_q=4, attention_block_kv=3),
                              segment_lengths=docs).hardware_flops == b.total
    train = maxflops.count(_config(D, H, Hkv, d, I, T, mode="train", max_target_length=tokens), segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs


@pytest.mark.parametrize("kvs", [[0, 3], [5]])
def test_decode_reads_the_cached_image_and_projects_nothing_of_it(kvs):
    D, H, Hkv, d, I, T = 8, 4, 2, 3, 10, 6
    macs = 0
    for _ in kvs:  # the text cache plays no part: the new token attends the image alone
        layer = NaiveCross(D, H, Hkv, d, I)
        cache = layer.image(RNG.normal(size=(T, D)))
        layer.macs = 0
        layer.forward(RNG.normal(size=(1, D)), cache)
        macs += layer.macs
    cfg = _config(D, H, Hkv, d, I, T, mode="decode", per_device_batch_size=len(kvs), kv_cache_bytes=2)
    b = maxflops.count(cfg, segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    assert t["kv_read"] == len(kvs) * T * 2 * Hkv * d * 2 and t["kv_write"] == 0


@pytest.mark.parametrize("mode", ["prefill", "train", "decode"])
def test_without_image_tokens_the_layers_idle_whole(mode):
    """cross_attention_tokens = 0 (text alone): an 'X' layer runs neither its mixer nor its FFN; the model counts as
    its other layers, rows kept (empty)."""
    kw = dict(emb_dim=8, num_query_heads=4, num_kv_heads=2, head_dim=3, mlp_dim=10, vocab_size=8, mode=mode,
              max_target_length=7, decode_kv_length=5)
    mixed = maxflops.count(quiet_config(num_decoder_layers=4, attention_layer_pattern="GX", **kw))
    alone = maxflops.count(quiet_config(num_decoder_layers=2, attention_layer_pattern="G", **kw))
    assert (mixed.total, mixed.hardware_flops) == (alone.total, alone.hardware_flops)
    assert [dict(r.components) for r in mixed.layers if r.name in ("layer 1", "layer 3")] == [{}, {}]
    if mode != "decode":
        assert maxflops.count(quiet_config(num_decoder_layers=4, attention_layer_pattern="GX",
                                                    cross_attention_tokens=3, **kw)).total > mixed.total


@pytest.mark.parametrize("extra, match", [
    (dict(attention_type="mla"), r"'attention_type'.*modelled on GQA"),
    (dict(mtp_num_layers=1, mtp_layer_pattern="X"), r"'attention_layer_pattern'.*decoder only"),
    (dict(convention="megatron"), r"'convention': 'megatron'"),
    (dict(cross_attention_tokens=-1), r"'cross_attention_tokens'"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    base = dict(num_decoder_layers=2, attention_layer_pattern="GX", emb_dim=12, num_query_heads=4, num_kv_heads=2,
                head_dim=3, cross_attention_tokens=4)
    with pytest.raises(ValueError, match=match):
        maxflops.model_config(**{**base, **extra})


def test_the_key_on_a_model_without_cross_attention_is_said():
    with pytest.warns(maxflops.InertKeyWarning, match="cross_attention_tokens"):
        maxflops.model_config(num_decoder_layers=2, cross_attention_tokens=4)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
def test_xla_counts_the_kernel_as_the_engine_prices_it(train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.cross.proof import cross_attention, params
    from maxflops.xla.hlo import count_lowered

    B, L, T, D, H, Hkv, d = 2, 9, 5, 8, 4, 2, 3
    prm = params(lambda name, shape: jnp.asarray(RNG.normal(size=shape), jnp.float32), D, H, Hkv, d)
    x, img = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32), jnp.asarray(RNG.normal(size=(B, T, D)), jnp.float32)
    fn = lambda p, x, img: cross_attention(p, x, img, H, Hkv)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x, img: jnp.sum(cross_attention(p, x, img, H, Hkv) ** 2), argnums=(0, 1, 2))
    names = ["qkv_proj", "core_attention", "out_proj"]
    got = count_lowered(fn, prm, x, img).by_scope(names)
    b = maxflops.count(_config(D, H, Hkv, d, 4, T, ffn_layer_pattern="-", mode="train" if train else "prefill",
                               max_target_length=L, per_device_batch_size=B))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs,docs", [("prefill", {}, ()), ("train", {}, ()),
                                             ("train", dict(remat_policy="full"), ()), ("prefill", {}, (5, 11)),
                                             ("train", {}, (5, 11))],
                         ids=["prefill", "train", "remat", "packed-prefill", "packed-train"])
def test_a_flax_model_with_cross_attention_layers_equals_xla(mode, knobs, docs):
    base = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="GGXG", emb_dim=64, num_query_heads=8,
                                 num_kv_heads=2, head_dim=16, mlp_dim=96, vocab_size=500, cross_attention_tokens=7)
    engine, xla = engine_and_xla(base, mode, knobs, docs)
    assert engine == xla
