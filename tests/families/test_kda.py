"""Kimi delta attention: the engine's model FLOPs against a naive per-token implementation that counts its own
multiply-adds (packed documents, decode); the reference kernel (recurrent and chunked) against that implementation's
output; XLA's count of the kernel against the engine's hardware figure (forward and train); the conventions."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


def _silu(x):
    return x / (1 + np.exp(-x))


class NaiveKDA:
    """A Kimi delta attention layer written token by token in numpy, every contraction a loop of multiply-adds that
    ``macs`` counts per part. The layer as the Kimi Linear report states it, not a copy of any kernel."""

    def __init__(self, D, H, d, r, K, full_gate=False, full_forget=False):
        self.D, self.H, self.d, self.r, self.K = D, H, d, r, K
        hd = H * d
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.wq, self.wk, self.wv = w(D, hd), w(D, hd), w(D, hd)
        self.f_a, self.f_b, self.g_a, self.g_b = w(D, r), w(r, hd), w(D, r), w(r, hd)
        self.g = w(D, hd) if full_gate else None  # Kimi K3's full-rank output gate
        self.f = w(D, hd) if full_forget else None  # Ling's full-rank forget gate
        self.wb, self.conv, self.wo = w(D, H), w(K, 3 * hd), w(hd, D)
        self.A_log, self.dt_bias, self.norm = w(H), w(hd), RNG.normal(size=d)
        self.macs = {}

    def matvec(self, part, v, W):  # v [n] @ W [n, m], one multiply-add per element of W
        self.macs[part] = self.macs.get(part, 0) + W.size
        return v @ W

    def forward(self, xs):
        """One document xs [L, D] -> [L, D]."""
        H, d, K, L = self.H, self.d, self.K, len(xs)
        hd = H * d
        mv = self.matvec
        qkv = np.stack([np.concatenate([mv("qkv_proj", x, W) for W in (self.wq, self.wk, self.wv)]) for x in xs])
        f = np.stack([mv("qkv_proj", x, self.f) if self.f is not None else
                      mv("qkv_proj", mv("qkv_proj", x, self.f_a), self.f_b) for x in xs])
        b = np.stack([mv("qkv_proj", x, self.wb) for x in xs])
        gate = np.stack([mv("qkv_proj", x, self.g) if self.g is not None else
                         mv("qkv_proj", mv("qkv_proj", x, self.g_a), self.g_b) for x in xs])
        conv = np.zeros_like(qkv)
        for t in range(L):
            for tap in range(K):  # tap reads token t - (K - 1 - tap); taps before the document's start read nothing
                s = t - (K - 1 - tap)
                if s >= 0:
                    conv[t] += self.conv[tap] * qkv[s]
                    self.macs["kda_conv"] = self.macs.get("kda_conv", 0) + 3 * hd
        y = _silu(conv).reshape(L, 3, H, d)
        l2 = lambda a: a / np.sqrt((a * a).sum(-1, keepdims=True) + 1e-6)  # noqa: E731
        q, k, v = l2(y[:, 0]) * d ** -0.5, l2(y[:, 1]), y[:, 2]
        g = -np.exp(self.A_log)[:, None] * np.log1p(np.exp(f.reshape(L, H, d) + self.dt_bias.reshape(H, d)))
        beta = 1 / (1 + np.exp(-b))
        S = np.zeros((H, d, d))
        out = np.zeros((L, H, d))
        for t in range(L):
            for h in range(H):
                S[h] = np.exp(g[t, h])[:, None] * S[h]
                read = mv("core_attention", k[t, h], S[h])
                S[h] = S[h] + np.outer(k[t, h], beta[t, h] * (v[t, h] - read))
                out[t, h] = mv("core_attention", q[t, h], S[h])
        out = out / np.sqrt((out ** 2).mean(-1, keepdims=True) + 1e-5) * self.norm
        out = (out * (1 / (1 + np.exp(-gate.reshape(L, H, d))))).reshape(L, hd)
        return np.stack([mv("out_proj", o, self.wo) for o in out])


def _config(D, H, d, r, K, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="K", ffn_layer_pattern="-", emb_dim=D,
                                 vocab_size=8, kda_num_heads=H, kda_head_dim=d, kda_gate_rank=r, kda_conv_kernel=K,
                                 **kw)


SHAPES = [  # D, H, d, r, K, document lengths
    (8, 2, 3, 3, 4, [13]),
    (6, 3, 2, 5, 3, [1, 2, 9]),
    (10, 1, 4, 2, 1, [7, 7]),
    (8, 2, 2, 2, 5, [3, 11]),
]


@pytest.mark.parametrize("full_gate,full_forget", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("D,H,d,r,K,docs", SHAPES)
def test_model_flops_equal_a_naive_layer_counting_its_multiply_adds(D, H, d, r, K, docs, full_gate, full_forget):
    naive = NaiveKDA(D, H, d, r, K, full_gate, full_forget)
    for L in docs:
        naive.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(_config(D, H, d, r, K, mode="prefill", max_target_length=sum(docs),
                               kda_full_rank_gate=full_gate, kda_full_rank_forget_gate=full_forget),
                       segment_lengths=docs)
    assert {k: v for k, v in b.components.items() if k != "logits"} == {k: 2 * v for k, v in naive.macs.items()}
    assert b.hardware_flops == b.total  # the default kernel (recurrent, valid conv) runs exactly the model's work


def test_decode_is_one_step_of_the_recurrence():
    """A decode step's FLOPs are the last token's in the naive layer; its bytes are the state and the conv window."""
    D, H, d, r, K = 8, 2, 3, 3, 4

    def macs(L):
        naive = NaiveKDA(D, H, d, r, K)
        if L:
            naive.forward(RNG.normal(size=(L, D)))
        return naive.macs

    for kv in (0, 2, 40):
        longer, shorter = macs(kv + 1), macs(kv)
        last = {k: 2 * (v - shorter.get(k, 0)) for k, v in longer.items()}
        b = maxflops.count(_config(D, H, d, r, K, mode="decode", decode_kv_length=kv, per_device_batch_size=1))
        assert {k: v for k, v in b.components.items() if k != "logits"} == last
    t = maxflops.decode_traffic(_config(D, H, d, r, K, mode="decode", decode_kv_length=100, per_device_batch_size=3,
                                        state_bytes=4))
    assert t.components["state"] == 3 * 2 * 4 * (H * d * d + (K - 1) * 3 * H * d)


def test_the_chunked_hardware_form_counts_its_matmuls():
    """kda_impl='chunked': per chunk and head three C x C by C x d products and three C x d by d x d ones, every
    sequence padded to whole chunks; the rest as the model's."""
    D, H, d, r, K, C = 16, 2, 4, 4, 3, 5
    docs = [13, 1, 10]
    model = maxflops.count(_config(D, H, d, r, K, mode="prefill", max_target_length=24), segment_lengths=docs)
    b = maxflops.count(_config(D, H, d, r, K, mode="prefill", max_target_length=24, kda_impl="chunked",
                               kda_chunk_size=C), segment_lengths=docs)
    chunks = 3 + 1 + 2
    assert b.hardware_components["core_attention"] == chunks * H * (3 * 2 * C * C * d + 3 * 2 * C * d * d)
    assert {k: v for k, v in b.hardware_components.items() if k != "core_attention"} == \
        {k: v for k, v in model.components.items() if k != "core_attention"}


def test_conventions():
    """Megatron-Bridge prices the output gate full rank and four state-sized ops; peers without a rule refuse."""
    D, H, d, r, K = 64, 4, 8, 8, 4
    kw = dict(mode="train", max_target_length=32, per_device_batch_size=2)
    exact = maxflops.count(_config(D, H, d, r, K, **kw))
    bridge = maxflops.count(_config(D, H, d, r, K, convention="megatron_bridge", **kw))
    tokens = 64
    hd = H * d
    gate_extra = 2 * D * hd - (2 * D * r + 2 * r * hd)
    assert bridge.components["qkv_proj"] - exact.components["qkv_proj"] == 3 * gate_extra * tokens
    assert bridge.components["core_attention"] == 2 * exact.components["core_attention"]
    for convention in ("maxtext", "megatron", "megatron_main"):
        with pytest.raises(ValueError, match=f"'convention': '{convention}' has no rule for Kimi delta attention"):
            _config(D, H, d, r, K, convention=convention, **kw)


# --- the reference kernel and XLA ----------------------------------------------------------------------------------

def _kernel_params(naive):
    import jax.numpy as jnp

    gate = {"g": naive.g} if naive.g is not None else {"g_a": naive.g_a, "g_b": naive.g_b}
    forget = {"f": naive.f} if naive.f is not None else {"f_a": naive.f_a, "f_b": naive.f_b}
    p = {"q": naive.wq, "k": naive.wk, "v": naive.wv, **forget, "b": naive.wb, **gate, "conv": naive.conv[:, None, :], "A_log": naive.A_log,
         "dt_bias": naive.dt_bias, "norm": naive.norm, "o": naive.wo}
    return {k: jnp.asarray(v) for k, v in p.items()}


@pytest.mark.parametrize("impl,chunk", [("recurrent", 1), ("chunked", 4), ("chunked", 5), ("chunked", 32)])
def test_the_reference_kernel_computes_the_naive_layer(impl, chunk):
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from maxflops.families.kda.proof import kda

        D, H, d, r, K = 8, 2, 3, 3, 4
        naive = NaiveKDA(D, H, d, r, K)
        x = RNG.normal(size=(2, 13, D))
        want = np.stack([naive.forward(row) for row in x])
        got = np.asarray(kda(_kernel_params(naive), jax.numpy.asarray(x), H, d, K, impl, chunk))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl,chunk,L,K,full_gate", [
    ("recurrent", 1, 9, 3, False), ("recurrent", 1, 2, 4, False), ("chunked", 4, 13, 4, False),
    ("chunked", 8, 5, 2, False), ("chunked", 3, 12, 1, False), ("recurrent", 1, 7, 3, True),
    ("chunked", 4, 9, 4, True), ("chunked", 4, 9, 4, "both")])
def test_xla_counts_the_kernel_as_the_engine_prices_it(impl, chunk, L, K, full_gate, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.kda.proof import kda
    from maxflops.xla.hlo import count_lowered

    B, D, H, d, r = 2, 16, 2, 4, 3
    naive = NaiveKDA(D, H, d, r, K, bool(full_gate), full_gate == "both")  # ("both": Ling's full-rank forget gate too)
    p = {k: v.astype(jnp.float32) for k, v in _kernel_params(naive).items()}
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = lambda p, x: kda(p, x, H, d, K, impl, chunk)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(kda(p, x, H, d, K, impl, chunk) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "kda_conv", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x).by_scope(names)
    b = maxflops.count(_config(D, H, d, r, K, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B, kda_impl=impl, kda_chunk_size=chunk,
                               kda_full_rank_gate=bool(full_gate), kda_full_rank_forget_gate=full_gate == "both"))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}
