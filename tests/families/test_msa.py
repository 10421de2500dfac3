"""MiniMax sparse attention (letter 'B', ``msa_*``: MiniMax-M3's sparse layers): the closed forms of its mask against
transformers' selection enumerated; the engine against a naive layer that runs transformers' selection token by token
and counts its own multiply-adds (packed documents and decode against a cache included); the indexer forward only in
training; decode bytes; the refusals; the reference kernels and a Flax model equal to XLA. transformers' eager
MiniMax-M3 is held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from flaxcheck import engine_and_xla
from maxflops.families.msa import block_topk, block_topk_gathered, new_token_block_keys

RNG = np.random.default_rng(0)


# --- the mask, enumerated ----------------------------------------------------------------------------------------

def brute_block_topk(L, B, K, local=1, seed=0):
    """MiniMax-M3's Lightning-Indexer selection as transformers runs it: each visible key scored at random, keys
    max-pooled per block of B (a block with no visible key at -inf), the query's block and the local - 1 before it
    at +inf, the top min(K, blocks) kept (-inf slots dropped); (attended pairs, keys of the gathered blocks)."""
    rng = np.random.default_rng(seed)
    nb = -(-L // B)
    pairs = 0
    for i in range(L):
        key = np.where(np.arange(nb * B) <= i, rng.random(nb * B), -np.inf)
        block = key.reshape(nb, B).max(-1)
        block[[max(i // B - j, 0) for j in range(local)]] = np.inf
        chosen = np.argsort(-block, kind="stable")[:min(K, nb)]
        chosen = chosen[np.isfinite(block[chosen]) | (block[chosen] > 0)]
        pairs += sum(int(min(i + 1, (b + 1) * B) - b * B) for b in chosen if b * B <= i)
    return pairs


@pytest.mark.parametrize("B,K,local", [(1, 1, 1), (2, 1, 1), (3, 2, 1), (4, 3, 2), (2, 4, 4), (5, 2, 2)])
def test_block_sparse_closed_form_matches_the_indexers_selection(B, K, local):
    """Whatever the scores and however many local blocks (at most K) are forced, the own block and K - 1 whole
    earlier ones: the count is the closed form's."""
    for L in range(1, 30):
        assert block_topk(L, B, K) == brute_block_topk(L, B, K, local, seed=L), (B, K, local, L)
    docs = np.array([1, 7, 12, 29, 30], dtype=np.int64)
    assert int(block_topk(docs, B, K).sum()) == sum(block_topk(int(L), B, K) for L in docs)
    for kv in range(40):  # decode: the last row of a sequence of kv + 1 tokens
        assert new_token_block_keys(kv, B, K) == block_topk(kv + 1, B, K) - block_topk(kv, B, K)
    assert list(new_token_block_keys(np.arange(40), B, K)) == [new_token_block_keys(kv, B, K)
                                                                      for kv in range(40)]


def test_block_sparse_gather_reads_whole_blocks():
    # 10 tokens in blocks of 4 (3 blocks), top 2: every query gathers 2 blocks of 4 keys
    assert block_topk_gathered(10, 4, 2) == 10 * 2 * 4
    assert block_topk_gathered(3, 4, 2) == 3 * 1 * 4  # one block formed: one gathered
    assert block_topk(10, 4, 2) == 36 + (1 + 2) + 4 * 2


# --- the engine against a naive layer -----------------------------------------------------------------------------

class NaiveMSA:
    """MiniMaxM3VLAttention with its indexer, one token at a time, then a gated MLP: the token's q, k, v and the
    indexer's q (n heads of d) and key (d); its index q against every cached index key and its own; per index head
    (= KV head) the keys' scores max-pooled per block of B, its own block and the local - 1 before it forced, the
    top K blocks kept; attention of each query head over its KV head's picked keys up to itself; o_proj; the MLP.
    Counts every matmul's multiply-adds, the indexer's apart."""

    def __init__(self, D, H, Hkv, hd, n, d, B, K, local, I):
        self.D, self.H, self.Hkv, self.hd, self.n, self.d, self.B, self.K, self.local = D, H, Hkv, hd, n, d, B, K, local
        self.macs = self.index_macs = self.pairs = 0
        w = lambda *s: RNG.normal(size=s)  # noqa: E731
        self.wq, self.wk, self.wv, self.wo = w(D, H * hd), w(D, Hkv * hd), w(D, Hkv * hd), w(H * hd, D)
        self.iq, self.ik = w(D, n * d), w(D, d)
        self.gate_up, self.down = w(D, 2 * I), w(I, D)

    def matvec(self, x, wt, index=False):
        if index:
            self.index_macs += wt.shape[0] * wt.shape[1]
        else:
            self.macs += wt.shape[0] * wt.shape[1]
        return x @ wt

    def forward(self, xs, cache=None):
        K_, V_, IK = cache or ([], [], [])
        for x in xs:
            q = self.matvec(x, self.wq).reshape(self.H, self.hd)
            K_.append(self.matvec(x, self.wk).reshape(self.Hkv, self.hd))
            V_.append(self.matvec(x, self.wv).reshape(self.Hkv, self.hd))
            iq = self.matvec(x, self.iq, index=True).reshape(self.n, self.d)
            IK.append(self.matvec(x, self.ik, index=True))
            i, keys = len(K_) - 1, np.array(IK)
            scores = np.stack([keys @ iq[h] for h in range(self.n)])  # [n, i + 1]
            self.index_macs += self.n * self.d * (i + 1)
            nb = i // self.B + 1
            pooled = np.array([[s[b * self.B:(b + 1) * self.B].max() for b in range(nb)] for s in scores])
            pooled[:, [max(i // self.B - j, 0) for j in range(self.local)]] = np.inf
            o = np.zeros((self.H, self.hd))
            g = self.H // self.Hkv
            for h in range(self.H):
                chosen = np.argsort(-pooled[h // g], kind="stable")[:self.K]
                js = [j for b in chosen for j in range(b * self.B, min((b + 1) * self.B, i + 1))]
                s = np.array([K_[j][h // g] @ q[h] for j in js])
                p = np.exp(s - s.max())
                o[h] = (p / p.sum()) @ np.array([V_[j][h // g] for j in js])
                self.macs += 2 * len(js) * self.hd
                self.pairs += len(js) if h == 0 else 0
            y = self.matvec(o.reshape(-1), self.wo)
            gu = self.matvec(y, self.gate_up)
            self.matvec(gu[:len(gu) // 2] * gu[len(gu) // 2:], self.down)
        return K_, V_, IK


SHAPES = dict(D=8, H=4, Hkv=2, hd=3, n=2, d=5, B=3, K=2, local=1, I=10)


def _config(s, layers="B", **kw):
    return maxflops.model_config(**{**dict(
        num_decoder_layers=len(layers), attention_layer_pattern=layers, emb_dim=s["D"], num_query_heads=s["H"],
        num_kv_heads=s["Hkv"], head_dim=s["hd"], mlp_dim=s["I"], vocab_size=8, index_n_heads=s["n"],
        index_head_dim=s["d"], msa_block_size=s["B"], msa_topk_blocks=s["K"], msa_local_blocks=s["local"]), **kw})


@pytest.mark.parametrize("shape,docs", [
    ({}, [17]), ({}, [2, 11, 7]), (dict(B=2, K=3, local=2), [13, 1]), (dict(B=4, K=1, H=2, Hkv=1, n=1), [9, 12]),
    (dict(B=5, K=4, local=4), [23]),
])
def test_model_flops_are_the_naive_layers_multiply_adds(shape, docs):
    s = {**SHAPES, **shape}
    layer = NaiveMSA(**s)
    for L in docs:  # each packed document its own sequence: its own blocks and indexer keys
        layer.forward(RNG.normal(size=(L, s["D"])))
    assert layer.pairs == sum(block_topk(L, s["B"], s["K"]) for L in docs)
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
        layer = NaiveMSA(**s)
        cache = layer.forward(RNG.normal(size=(kv, s["D"])))
        layer.macs = layer.index_macs = 0
        layer.forward(RNG.normal(size=(1, s["D"])), cache)
        macs += layer.macs + layer.index_macs
    cfg = _config(s, mode="decode", per_device_batch_size=len(kvs), kv_cache_bytes=2, index_cache_bytes=1)
    b = maxflops.count(cfg, segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    attended = sum(new_token_block_keys(kv, s["B"], s["K"]) for kv in kvs)
    assert t["kv_read"] == attended * 2 * s["Hkv"] * s["hd"] * 2
    assert t["index_read"] == sum(kv + 1 for kv in kvs) * s["d"] and t["index_write"] == len(kvs) * s["d"]


def test_hardware_forms():
    """'dense' the masked square (the indexer's too, with indexer_impl='dense' or attention_impl='dense'); 'gather'
    whole blocks; 'ideal' the model's pairs."""
    s, L = SHAPES, 14
    H, hd, n, d = s["H"], s["hd"], s["n"], s["d"]

    def hw(**kw):
        return maxflops.count(_config(s, mode="prefill", max_target_length=L, **kw)).hardware_components

    assert hw()["core_attention"] == 4 * H * hd * block_topk(L, s["B"], s["K"])
    assert hw(msa_impl="gather")["core_attention"] == 4 * H * hd * L * 2 * 3
    assert hw(msa_impl="dense")["core_attention"] == 4 * H * hd * L * L
    assert hw()["indexer_score"] == 2 * n * d * L * (L + 1) // 2
    assert hw(indexer_impl="dense")["indexer_score"] == hw(attention_impl="dense")["indexer_score"] == 2 * n * d * L * L
    # a program that skips the indexer where every visible key is attended (at most K blocks: 6 tokens here)
    short = maxflops.count(_config(s, mode="prefill", max_target_length=12, indexer_skip_short=True),
                           segment_lengths=[6, 6]).hardware_components
    assert short["indexer_proj"] == short["indexer_score"] == 0
    assert hw(indexer_skip_short=True)["indexer_score"] == hw()["indexer_score"]


@pytest.mark.parametrize("extra, match", [
    (dict(attention_type="mla"), r"'attention_type'.*GQA"),
    (dict(msa_local_blocks=3), r"'msa_local_blocks'"),
    (dict(indexer_loss_scaling_factor=0.1), r"'indexer_loss_scaling_factor'"),
    (dict(convention="maxtext"), r"'convention': 'maxtext'"),
    (dict(msa_impl="blocked"), r"'msa_impl'"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    with pytest.raises(ValueError, match=match):
        _config(SHAPES, layers="GB", **extra)


def test_the_keys_on_a_model_without_sparse_layers_are_said():
    with pytest.warns(maxflops.InertKeyWarning, match="msa_block_size"):
        maxflops.model_config(num_decoder_layers=2, msa_block_size=64)
    with pytest.warns(maxflops.InertKeyWarning, match="index_n_heads"):
        maxflops.model_config(num_decoder_layers=2, index_n_heads=4)


def _arrays(Bt, L, D, H, Hkv, hd, n, d):
    import jax.numpy as jnp

    a = lambda *s: jnp.asarray(RNG.normal(size=s), jnp.float32)  # noqa: E731
    return {"idx_wq": a(D, n * d), "idx_wk": a(D, d)}, a(Bt, L, D), a(Bt, L, H, hd), a(Bt, L, Hkv, hd), a(Bt, L, Hkv, hd)


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["ideal", "gather", "dense"])
def test_the_kernels_pick_transformers_blocks_and_xla_counts_them_as_the_engine_prices_them(impl):
    import jax
    import jax.numpy as jnp

    from maxflops.families.msa.proof import block_scores, msa_attention
    from maxflops.families.attention.proof import attention
    from maxflops.xla.hlo import count_lowered

    Bt, L, D, H, Hkv, hd, B, K = 2, 11, 8, 4, 2, 3, 3, 2
    prm, x, q, k, v = _arrays(Bt, L, D, H, Hkv, hd, Hkv, 5)

    def core(prm, x, q, k, v):
        scores = block_scores(prm, x, Hkv, 5, B, 1)
        with jax.named_scope("core_attention"):
            return msa_attention(q, k, v, scores, B, K, impl)

    # the same blocks, the same output, whichever form; with every block attended, causal attention
    assert jnp.allclose(core(prm, x, q, k, v), msa_attention(q, k, v, block_scores(prm, x, Hkv, 5, B, 1), B, K),
                        atol=1e-4)
    assert jnp.allclose(msa_attention(q, k, v, block_scores(prm, x, Hkv, 5, B, 1), B, 4, impl), attention(q, k, v),
                        atol=1e-4)
    names = ["indexer_proj", "indexer_score", "core_attention"]
    for train in (False, True):
        fn = core
        if train:
            fn = jax.grad(lambda *a: jnp.sum(core(*a) ** 2), argnums=(0, 1, 2, 3, 4))
        got = count_lowered(fn, prm, x, q, k, v).by_scope(names)
        b = maxflops.count(_config({**SHAPES, "n": Hkv}, ffn_layer_pattern="-", mode="train" if train else "prefill",
                                   max_target_length=L, per_device_batch_size=Bt, msa_impl=impl))
        assert {k_: got[k_] for k_ in names} == {k_: b.hardware_components[k_] for k_ in names}, (impl, train)


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs,docs", [
    ("prefill", {}, ()), ("train", {}, ()), ("train", dict(remat_policy="full"), ()),
    ("train", dict(msa_impl="gather"), ()), ("prefill", dict(msa_impl="dense", attention_impl="dense"), ()),
    ("prefill", dict(indexer_skip_short=True), (5, 11)), ("train", dict(msa_impl="gather"), (5, 11)),
    ("train", dict(flash_backward_recompute=True), ()),
    ("train", dict(flash_backward_recompute=True, msa_impl="dense", attention_impl="blocked"), ()),
], ids=["prefill", "train", "remat", "gather", "dense", "packed-prefill", "packed-gather-train", "flash",
        "flash-dense-blocked-indexer"])
def test_a_flax_model_with_sparse_layers_equals_xla(mode, knobs, docs):
    base = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="GGBB", emb_dim=64, num_query_heads=8,
                                 num_kv_heads=2, head_dim=16, mlp_dim=96, vocab_size=500, index_n_heads=2,
                                 index_head_dim=32, msa_block_size=4, msa_topk_blocks=2, max_target_length=16)
    engine, xla = engine_and_xla(base, mode, knobs, docs)
    assert engine == xla
