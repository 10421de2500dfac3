"""QSA (letter 'Q', ``qsa_*``: Qwen4-Exp's indexed attention): the engine against a naive layer that runs
transformers' Qwen4ExpTextQSAIndexer selection token by token and counts its own multiply-adds (packed documents and
decode against a cache included); the indexer forward only in training; decode bytes; the hardware forms; the
refusals; the reference kernels and a Flax model equal to XLA. transformers' eager Qwen4-Exp is held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from flaxcheck import engine_and_xla
from maxflops import masks
from maxflops.families.qsa import qsa_pairs, new_token_qsa_keys

RNG = np.random.default_rng(3)


class NaiveQSA:
    """Qwen4ExpTextAttention with its indexer, one token at a time, then a gated MLP: the token's q, k, v and the
    indexer's q (n heads of d) and raw key (d); the visible raw keys in complete blocks of r, each block mean-pooled;
    the ReLU of each index head's score against each pooled block, summed over the heads; the top min(K, blocks)
    blocks and the tail (the visible keys past the last complete block) attended by every head; o_proj; the MLP.
    Counts every matmul's multiply-adds, the indexer's apart."""

    def __init__(self, D, H, Hkv, hd, n, d, r, K, I):
        self.D, self.H, self.Hkv, self.hd, self.n, self.d, self.r, self.K = D, H, Hkv, hd, n, d, r, K
        self.macs = self.index_macs = self.pairs = 0
        w = lambda *s: RNG.normal(size=s)  # noqa: E731
        self.wq, self.wk, self.wv, self.wo = w(D, H * hd), w(D, Hkv * hd), w(D, Hkv * hd), w(H * hd, D)
        self.iqk = w(D, (n + 1) * d)
        self.gate_up, self.down = w(D, 2 * I), w(I, D)

    def matvec(self, x, wt, index=False):
        if index:
            self.index_macs += wt.shape[0] * wt.shape[1]
        else:
            self.macs += wt.shape[0] * wt.shape[1]
        return x @ wt

    def forward(self, xs, cache=None):
        K_, V_, RAW = cache or ([], [], [])
        for x in xs:
            q = self.matvec(x, self.wq).reshape(self.H, self.hd)
            K_.append(self.matvec(x, self.wk).reshape(self.Hkv, self.hd))
            V_.append(self.matvec(x, self.wv).reshape(self.Hkv, self.hd))
            qk = self.matvec(x, self.iqk, index=True)
            iq = qk[:self.n * self.d].reshape(self.n, self.d)
            RAW.append(qk[self.n * self.d:])
            visible = len(K_)
            nb = visible // self.r
            picked = []
            if nb:
                pooled = np.array(RAW[:nb * self.r]).reshape(nb, self.r, self.d).mean(1)
                scores = np.maximum(pooled @ iq.T, 0).sum(-1)  # [nb]
                self.index_macs += nb * self.n * self.d
                picked = list(np.argsort(-scores, kind="stable")[:min(self.K, nb)])
            js = [j for b in picked for j in range(b * self.r, (b + 1) * self.r)] + list(range(nb * self.r, visible))
            o = np.zeros((self.H, self.hd))
            g = self.H // self.Hkv
            for h in range(self.H):
                s = np.array([K_[j][h // g] @ q[h] for j in js])
                p = np.exp(s - s.max())
                o[h] = (p / p.sum()) @ np.array([V_[j][h // g] for j in js])
                self.macs += 2 * len(js) * self.hd
            self.pairs += len(js)
            y = self.matvec(o.reshape(-1), self.wo)
            gu = self.matvec(y, self.gate_up)
            self.matvec(gu[:len(gu) // 2] * gu[len(gu) // 2:], self.down)
        return K_, V_, RAW


SHAPES = dict(D=8, H=4, Hkv=2, hd=3, n=2, d=5, r=3, K=2, I=10)


def _config(s, layers="Q", **kw):
    return maxflops.model_config(**{**dict(
        num_decoder_layers=len(layers), attention_layer_pattern=layers, emb_dim=s["D"], num_query_heads=s["H"],
        num_kv_heads=s["Hkv"], head_dim=s["hd"], mlp_dim=s["I"], vocab_size=8, index_n_heads=s["n"],
        index_head_dim=s["d"], qsa_block_size=s["r"], qsa_budget=s["K"] * s["r"]), **kw})


def test_the_pairs_and_scores_are_their_enumeration():
    for r in range(1, 6):
        for K in range(1, 5):
            for L in range(40):
                assert qsa_pairs(L, r, K) == sum(min((i + 1) // r, K) * r + (i + 1) % r for i in range(L))
                if L:
                    assert new_token_qsa_keys(L - 1, r, K) == min(L // r, K) * r + L % r
            assert masks.compressed_visible(17, r) == sum((i + 1) // r for i in range(17))


@pytest.mark.parametrize("shape,docs", [
    ({}, [17]), ({}, [2, 11, 7]), (dict(r=2, K=3), [13, 1]), (dict(r=4, K=1, H=2, Hkv=1, n=1), [9, 12]),
    (dict(r=1, K=4), [10]), (dict(r=5, K=2), [23]),
])
def test_model_flops_are_the_naive_layers_multiply_adds(shape, docs):
    s = {**SHAPES, **shape}
    layer = NaiveQSA(**s)
    for L in docs:  # each packed document its own sequence: its own blocks and indexer keys
        layer.forward(RNG.normal(size=(L, s["D"])))
    assert layer.pairs == sum(qsa_pairs(L, s["r"], s["K"]) for L in docs)
    tokens = sum(docs)
    b = maxflops.count(_config(s, mode="prefill", max_target_length=tokens), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * (layer.macs + layer.index_macs)
    assert b.components["indexer_proj"] + b.components["indexer_score"] == 2 * layer.index_macs
    train = maxflops.count(_config(s, mode="train", max_target_length=tokens), segment_lengths=docs)
    # the indexer's output is block indices: no gradient reaches it, it runs forward only
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs + 2 * layer.index_macs


@pytest.mark.parametrize("kvs", [[0, 4], [9], [2, 6, 13]])
def test_decode_is_the_naive_layers_next_token(kvs):
    s = SHAPES
    macs = 0
    for kv in kvs:
        layer = NaiveQSA(**s)
        cache = layer.forward(RNG.normal(size=(kv, s["D"])))
        layer.macs = layer.index_macs = 0
        layer.forward(RNG.normal(size=(1, s["D"])), cache)
        macs += layer.macs + layer.index_macs
    cfg = _config(s, mode="decode", per_device_batch_size=len(kvs), kv_cache_bytes=2, index_cache_bytes=1)
    b = maxflops.count(cfg, segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    attended = sum(new_token_qsa_keys(kv, s["r"], s["K"]) for kv in kvs)
    assert t["kv_read"] == attended * 2 * s["Hkv"] * s["hd"] * 2
    # the blocks are pooled from every cached raw index key
    assert t["index_read"] == sum(kv + 1 for kv in kvs) * s["d"] and t["index_write"] == len(kvs) * s["d"]


def test_hardware_forms():
    """'dense' the masked square (transformers' eager path); the indexer 'dense': every query against every complete
    block; 'ideal' the model's pairs."""
    s, L = SHAPES, 14
    H, hd, n, d, r = s["H"], s["hd"], s["n"], s["d"], s["r"]

    def hw(**kw):
        return maxflops.count(_config(s, mode="prefill", max_target_length=L, **kw)).hardware_components

    assert hw()["core_attention"] == 4 * H * hd * qsa_pairs(L, r, s["K"])
    assert hw(qsa_impl="dense")["core_attention"] == 4 * H * hd * L * L
    assert hw()["indexer_score"] == 2 * n * d * sum((i + 1) // r for i in range(L))
    assert hw(indexer_impl="dense")["indexer_score"] == 2 * n * d * L * (L // r)
    # a program that skips the indexer where every visible key is attended (fewer than (K + 1) r = 9 tokens here)
    short = maxflops.count(_config(s, mode="prefill", max_target_length=16, indexer_skip_short=True),
                           segment_lengths=[8, 8]).hardware_components
    assert short["indexer_proj"] == short["indexer_score"] == 0
    assert hw(indexer_skip_short=True)["indexer_score"] == hw()["indexer_score"]


@pytest.mark.parametrize("extra, match", [
    (dict(attention_type="mla"), r"'attention_type'.*GQA"),
    (dict(qsa_budget=7), r"'qsa_budget'"),
    (dict(indexer_loss_scaling_factor=0.1), r"'indexer_loss_scaling_factor'"),
    (dict(convention="maxtext"), r"'convention': 'maxtext'"),
    (dict(qsa_impl="gather"), r"'qsa_impl'"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    with pytest.raises(ValueError, match=match):
        _config(SHAPES, layers="GQ", **extra)


def test_the_keys_on_a_model_without_indexed_layers_are_said():
    with pytest.warns(maxflops.InertKeyWarning, match="qsa_block_size"):
        maxflops.model_config(num_decoder_layers=2, qsa_block_size=64)


def _arrays(Bt, L, D, H, Hkv, hd, n, d):
    import jax.numpy as jnp

    a = lambda *s: jnp.asarray(RNG.normal(size=s), jnp.float32)  # noqa: E731
    return {"idx_wqk": a(D, n * d + d)}, a(Bt, L, D), a(Bt, L, H, hd), a(Bt, L, Hkv, hd), a(Bt, L, Hkv, hd)


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["ideal", "dense"])
def test_the_kernels_pick_transformers_blocks_and_xla_counts_them_as_the_engine_prices_them(impl):
    import jax
    import jax.numpy as jnp

    from maxflops.families.attention.proof import attention
    from maxflops.families.qsa.proof import block_scores, qsa_attention
    from maxflops.xla.hlo import count_lowered

    Bt, L, D, H, Hkv, hd, r, K, n, d = 2, 13, 8, 4, 2, 3, 3, 2, 2, 5
    prm, x, q, k, v = _arrays(Bt, L, D, H, Hkv, hd, n, d)
    indexer = "dense" if impl == "dense" else "attention"

    def core(prm, x, q, k, v):
        scores = block_scores(prm, x, n, d, r, indexer)
        with jax.named_scope("core_attention"):
            return qsa_attention(q, k, v, scores, r, K, impl)

    # the same blocks, the same output, whichever form; with every block attended, causal attention
    assert jnp.allclose(core(prm, x, q, k, v), qsa_attention(q, k, v, block_scores(prm, x, n, d, r), r, K),
                        atol=1e-4)
    assert jnp.allclose(qsa_attention(q, k, v, block_scores(prm, x, n, d, r), r, L, impl), attention(q, k, v),
                        atol=1e-4)
    names = ["indexer_proj", "indexer_score", "core_attention"]
    for train in (False, True):
        fn = core
        if train:
            fn = jax.grad(lambda *a: jnp.sum(core(*a) ** 2), argnums=(0, 1, 2, 3, 4))
        got = count_lowered(fn, prm, x, q, k, v).by_scope(names)
        b = maxflops.count(_config(dict(SHAPES, n=n, d=d, r=r, K=K), ffn_layer_pattern="-",
                                   mode="train" if train else "prefill", max_target_length=L,
                                   per_device_batch_size=Bt, qsa_impl=impl, indexer_impl=indexer))
        assert {k_: got[k_] for k_ in names} == {k_: b.hardware_components[k_] for k_ in names}, (impl, train)


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs,docs", [
    ("prefill", {}, ()), ("train", {}, ()), ("train", dict(remat_policy="full"), ()),
    ("prefill", dict(qsa_impl="dense", indexer_impl="dense"), ()), ("prefill", dict(indexer_skip_short=True), (5, 11)),
    ("train", dict(qsa_impl="dense"), (5, 11)), ("train", dict(flash_backward_recompute=True), ()),
], ids=["prefill", "train", "remat", "dense", "packed-prefill", "packed-dense-train", "flash"])
def test_a_flax_model_with_indexed_layers_equals_xla(mode, knobs, docs):
    base = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="GQDQ", emb_dim=64, num_query_heads=8,
                                 num_kv_heads=2, head_dim=16, mlp_dim=96, vocab_size=500, index_n_heads=2,
                                 index_head_dim=32, qsa_block_size=4, qsa_budget=8, max_target_length=16,
                                 attention_output_gate=True)
    engine, xla = engine_and_xla(base, mode, knobs, docs)
    assert engine == xla
