"""xLSTM's mLSTM: the engine's model FLOPs against a naive per-token layer that counts its own multiply-adds (packed
documents, decode), written from the recurrence as the xLSTM paper and transformers' step kernel state it; the
chunked forms' hardware counts against an enumeration of their chunks; XLA's count of the reference kernel (each
form, forward and train) against the engine's hardware figure; refusals."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveMLSTM:
    """An mLSTM layer token by token in numpy; ``macs`` counts each contraction's multiply-adds per part."""

    def __init__(self, D, H, QK, V):
        self.D, self.H, self.dqk, self.dv = D, H, QK // H, V // H
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.W = {"q": w(D, QK), "k": w(D, QK), "v": w(D, V), "o": w(D, V), "i": w(D, H), "f": w(D, H)}
        self.out = w(V, D)
        self.macs = {}

    def matvec(self, part, v, W):
        self.macs[part] = self.macs.get(part, 0) + W.size
        return v @ W

    def forward(self, xs, state=None):
        H, dqk, dv = self.H, self.dqk, self.dv
        C, n, m = state or (np.zeros((H, dqk, dv)), np.zeros((H, dqk)), np.zeros(H))
        ys = []
        for x in xs:
            p = {name: self.matvec("qkv_proj", x, W) for name, W in self.W.items()}
            q, k, v = p["q"].reshape(H, dqk) * dqk ** -0.5, p["k"].reshape(H, dqk), p["v"].reshape(H, dv)
            h = np.zeros((H, dv))
            for j in range(H):
                logf = -np.logaddexp(0, -p["f"][j])
                m_new = max(logf + m[j], p["i"][j])
                fa, ia = np.exp(logf + m[j] - m_new), np.exp(p["i"][j] - m_new)
                C[j] = fa * C[j] + ia * np.outer(k[j], v[j])  # (an outer product: elementwise)
                n[j] = fa * n[j] + ia * k[j]
                num = self.matvec("core_attention", q[j], C[j])
                den = max(abs(self.matvec("core_attention", q[j], n[j][:, None])[0]), np.exp(-m_new))
                h[j], m[j] = num / den, m_new
            h = h / np.sqrt((h ** 2).mean(-1, keepdims=True) + 1e-6)
            ys.append(self.matvec("out_proj", h.reshape(-1) / (1 + np.exp(-p["o"])), self.out))
        return (np.stack(ys) if ys else np.zeros((0, self.D))), (C, n, m)


def _config(D, H, QK, V, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="T", ffn_layer_pattern="-", emb_dim=D,
                                 vocab_size=8, mlstm_num_heads=H, mlstm_qk_dim=QK, mlstm_v_dim=V, **kw)


@pytest.mark.parametrize("D,H,QK,V,docs", [(8, 2, 4, 8, [13]), (6, 3, 6, 9, [1, 2, 9]), (10, 1, 5, 10, [7, 7])])
def test_model_flops_equal_a_naive_layer_counting_its_multiply_adds(D, H, QK, V, docs):
    naive = NaiveMLSTM(D, H, QK, V)
    for L in docs:
        naive.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(_config(D, H, QK, V, mode="prefill", max_target_length=sum(docs)), segment_lengths=docs)
    assert {k: v for k, v in b.components.items() if k != "logits"} == {k: 2 * v for k, v in naive.macs.items()}
    train = maxflops.count(_config(D, H, QK, V, mode="train", max_target_length=sum(docs)), segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * sum(naive.macs.values())


@pytest.mark.parametrize("kvs", [[0], [3, 8], [1, 5, 12]])
def test_decode_is_one_step_of_the_recurrence(kvs):
    D, H, QK, V = 8, 2, 4, 8
    macs = 0
    for kv in kvs:
        naive = NaiveMLSTM(D, H, QK, V)
        _, state = naive.forward(RNG.normal(size=(kv, D)))
        naive.macs = {}
        naive.forward(RNG.normal(size=(1, D)), state)
        macs += sum(naive.macs.values())
    cfg = _config(D, H, QK, V, mode="decode", per_device_batch_size=len(kvs), state_bytes=4)
    b = maxflops.count(cfg, segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    # the state per sequence and head: C (dqk x dv), n (dqk), m (1), read and written
    assert maxflops.decode_traffic(cfg, segment_lengths=kvs).components["state"] == \
        2 * len(kvs) * H * (2 * 4 + 2 + 1) * 4


@pytest.mark.parametrize("impl", ["chunked", "chunked_then_recurrent"])
@pytest.mark.parametrize("docs,C", [([13], 4), ([8, 3], 4), ([5, 16, 2], 8)])
def test_the_chunked_forms_count_each_chunk(impl, docs, C):
    D, H, QK, V = 8, 2, 4, 8
    dqk, dv = QK // H, V // H
    b = maxflops.count(_config(D, H, QK, V, mode="prefill", max_target_length=sum(docs), mlstm_impl=impl,
                               mlstm_chunk_size=C), segment_lengths=docs)
    want = 0
    for L in docs:
        whole = L // C if impl == "chunked_then_recurrent" else -(-L // C)
        per_chunk = 2 * C * dqk * dv + 2 * C * dqk * dv + 2 * C * C * dqk + 2 * C * C * dv + 2 * C * dqk
        rest = L - whole * C if impl == "chunked_then_recurrent" else 0
        want += H * (whole * per_chunk + rest * (2 * dqk * dv + 2 * dqk * dv + 2 * dqk))
    assert b.hardware_components["core_attention"] == want


def test_refusals_name_the_key():
    with pytest.raises(ValueError, match="mlstm_qk_dim"):
        _config(8, 3, 4, 9)
    with pytest.raises(ValueError, match="'convention': 'maxtext' has no rule"):
        _config(8, 2, 4, 8, convention="maxtext")


# --- the reference kernel and XLA ----------------------------------------------------------------------------------

def test_the_reference_kernel_computes_the_naive_layer():
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from maxflops.families.mlstm.proof import mlstm

        D, H, QK, V = 8, 2, 4, 8
        naive = NaiveMLSTM(D, H, QK, V)
        p = {k: jax.numpy.asarray(w) for k, w in naive.W.items()} | {"out": jax.numpy.asarray(naive.out)}
        x = RNG.normal(size=(2, 9, D))
        want = np.stack([naive.forward(row)[0] for row in x])
        got = np.asarray(mlstm(p, jax.numpy.asarray(x), H, "recurrent"))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl,C,L", [("recurrent", 4, 9), ("chunked", 4, 13), ("chunked", 4, 8),
                                      ("chunked_then_recurrent", 4, 11), ("chunked_then_recurrent", 8, 5)])
def test_xla_counts_the_kernel_as_the_engine_prices_it(impl, C, L, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.mlstm.proof import mlstm, params
    from maxflops.xla.hlo import count_lowered

    B, D, H, QK, V = 2, 16, 2, 8, 12
    p = params(lambda name, shape: jnp.asarray(RNG.normal(size=shape), jnp.float32), D, H, QK, V)
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    # a prefill continuing from a state and keeping its last one (every chunk's update runs and takes a gradient)
    state = (jnp.zeros((B, H, QK // H, V // H)), jnp.zeros((B, H, QK // H)), jnp.zeros((B, H)))
    fn = lambda p, x, s: mlstm(p, x, H, impl, C, s, return_state=True)  # noqa: E731
    if train:
        def loss(p, x, s):
            out, (Cs, n, _) = mlstm(p, x, H, impl, C, s, return_state=True)
            return jnp.sum(out ** 2) + jnp.sum(Cs * Cs) + jnp.sum(n * n)
        fn = jax.grad(loss, argnums=(0, 1, 2))
    names = ["qkv_proj", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x, state).by_scope(names)
    b = maxflops.count(_config(D, H, QK, V, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B, mlstm_impl=impl, mlstm_chunk_size=C))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}
