"""The gated delta product: the engine's model FLOPs against a naive per-token implementation that counts its own
multiply-adds (packed documents, decode); the reference kernel (recurrent and chunked) against that implementation's
output; XLA's count of the kernel against the engine's hardware figure (forward and train); Megatron-LM's rule."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


def _silu(x):
    return x / (1 + np.exp(-x))


class NaiveGDP:
    """A gated-delta-product layer written token by token in numpy, every contraction a loop of multiply-adds that
    ``macs`` counts per part: the layer as the DeltaProduct paper and Megatron-LM's mixer describe it (one decay per
    token, then M delta-rule steps, then the query's read), not a copy of any kernel."""

    def __init__(self, D, H, P, N, G, M, K):
        self.D, self.H, self.P, self.N, self.G, self.M, self.K = D, H, P, N, G, M, K
        d_in = H * P
        self.channels = M * d_in + (M + 1) * G * N
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.w_in = w(D, d_in * (1 + M) + G * N * (1 + M) + H * (1 + M))
        self.conv, self.wo = w(K, self.channels), w(d_in, D)
        self.A_log, self.dt_bias, self.norm = w(H), w(H), RNG.normal(size=d_in)
        self.macs = {}

    def matvec(self, part, v, W):  # v [n] @ W [n, m], one multiply-add per element of W
        self.macs[part] = self.macs.get(part, 0) + W.size
        return v @ W

    def forward(self, xs):
        """One document xs [L, D] -> [L, D]."""
        H, P, N, G, M, K, L = self.H, self.P, self.N, self.G, self.M, self.K, len(xs)
        d_in, ch = H * P, self.channels
        proj = np.stack([self.matvec("qkv_proj", x, self.w_in) for x in xs])
        z, vkq, ba = proj[:, :d_in], proj[:, d_in: d_in + ch], proj[:, d_in + ch:]
        conv = np.zeros_like(vkq)
        for t in range(L):
            for tap in range(K):  # tap reads token t - (K - 1 - tap); taps before the document's start read nothing
                s = t - (K - 1 - tap)
                if s >= 0:
                    conv[t] += self.conv[tap] * vkq[s]
                    self.macs["gdp_conv"] = self.macs.get("gdp_conv", 0) + ch
        y = _silu(conv)
        l2 = lambda a: a / np.sqrt((a * a).sum(-1, keepdims=True) + 1e-6)  # noqa: E731
        v = y[:, : M * d_in].reshape(L, M, H, P)
        k = np.repeat(l2(y[:, M * d_in: M * d_in + M * G * N].reshape(L, M, G, N)), H // G, axis=2)
        q = np.repeat(l2(y[:, M * d_in + M * G * N:].reshape(L, G, N)), H // G, axis=1) * N ** -0.5
        beta = 1 / (1 + np.exp(-ba[:, : M * H].reshape(L, M, H)))
        g = -np.exp(self.A_log) * np.log1p(np.exp(ba[:, M * H:] + self.dt_bias))
        S = np.zeros((H, N, P))
        out = np.zeros((L, H, P))
        for t in range(L):
            for h in range(H):
                S[h] = np.exp(g[t, h]) * S[h]
                for j in range(M):
                    read = self.matvec("core_attention", k[t, j, h], S[h])
                    S[h] = S[h] + np.outer(k[t, j, h], beta[t, j, h] * (v[t, j, h] - read))
                out[t, h] = self.matvec("core_attention", q[t, h], S[h])
        o = (out.reshape(L, d_in) * _silu(z)).reshape(L, G, d_in // G)
        o = (o / np.sqrt((o ** 2).mean(-1, keepdims=True) + 1e-5)).reshape(L, d_in) * self.norm
        return np.stack([self.matvec("out_proj", r, self.wo) for r in o])


def _config(D, H, P, N, G, M, K, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="P", ffn_layer_pattern="-", emb_dim=D,
                                 vocab_size=8, gdp_num_heads=H, gdp_head_dim=P, gdp_state_dim=N, gdp_num_groups=G,
                                 gdp_num_householder=M, gdp_conv_kernel=K, **kw)


SHAPES = [  # D, H, P, N, G, M, K, document lengths
    (8, 2, 3, 4, 1, 3, 4, [13]),
    (6, 4, 2, 3, 2, 2, 3, [1, 2, 9]),
    (10, 2, 4, 2, 2, 1, 1, [7, 7]),
    (8, 3, 2, 2, 3, 4, 5, [3, 11]),
]


@pytest.mark.parametrize("D,H,P,N,G,M,K,docs", SHAPES)
def test_model_flops_equal_a_naive_layer_counting_its_multiply_adds(D, H, P, N, G, M, K, docs):
    naive = NaiveGDP(D, H, P, N, G, M, K)
    for L in docs:
        naive.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(_config(D, H, P, N, G, M, K, mode="prefill", max_target_length=sum(docs)),
                       segment_lengths=docs)
    assert {k: v for k, v in b.components.items() if k != "logits"} == {k: 2 * v for k, v in naive.macs.items()}
    assert b.hardware_flops == b.total  # the default kernel (recurrent, valid conv) runs exactly the model's work


def test_one_householder_step_is_a_gated_delta_net():
    """M = 1: the same projections, conv channels and core as the gated delta net with key heads = groups."""
    D, H, P, N, G = 16, 4, 3, 5, 2
    kw = dict(mode="train", max_target_length=12, per_device_batch_size=2)
    gdp = maxflops.count(_config(D, H, P, N, G, 1, 4, **kw))
    gdn = maxflops.count(maxflops.model_config(
        num_decoder_layers=1, attention_layer_pattern="D", ffn_layer_pattern="-", emb_dim=D, vocab_size=8,
        gdn_num_key_heads=G, gdn_num_value_heads=H, gdn_key_head_dim=N, gdn_value_head_dim=P, gdn_conv_kernel_dim=4,
        **kw))
    rename = {"gdp_conv": "gdn_conv"}
    assert {rename.get(k, k): v for k, v in gdp.components.items()} == gdn.components


def test_decode_is_one_step_of_the_recurrence():
    """A decode step's FLOPs are the last token's in the naive layer; its bytes are the state and the conv window."""
    D, H, P, N, G, M, K = 8, 2, 3, 4, 1, 3, 4

    def macs(L):
        naive = NaiveGDP(D, H, P, N, G, M, K)
        if L:
            naive.forward(RNG.normal(size=(L, D)))
        return naive.macs

    for kv in (0, 2, 40):
        longer, shorter = macs(kv + 1), macs(kv)
        last = {k: 2 * (v - shorter.get(k, 0)) for k, v in longer.items()}
        b = maxflops.count(_config(D, H, P, N, G, M, K, mode="decode", decode_kv_length=kv, per_device_batch_size=1))
        assert {k: v for k, v in b.components.items() if k != "logits"} == last
    t = maxflops.decode_traffic(_config(D, H, P, N, G, M, K, mode="decode", decode_kv_length=100,
                                        per_device_batch_size=3, state_bytes=4))
    channels = M * H * P + (M + 1) * G * N
    assert t.components["state"] == 3 * 2 * 4 * (H * N * P + (K - 1) * channels)


def _chunked_matmuls(H, P, N, M, C, L):
    """The kernel's loops chunk by chunk: the expanded stream's chunks (K K^T, T (beta e^G K), T (beta V), W S,
    K^T V_new), then the token chunks (Q S, and per copy Q K^T and its product with V_new). (It restates the per-chunk
    matmuls the engine prices; what holds them is XLA's count of the kernel below. Here: the two chunk counts per
    document, by iteration.)"""
    total = 0
    for _ in range(0, M * L, C):
        total += H * (2 * C * C * N + 2 * C * C * N + 2 * C * C * P + 2 * C * N * P + 2 * C * N * P)
    for _ in range(0, L, C):
        total += H * (2 * C * N * P + sum(2 * C * C * N + 2 * C * C * P for _ in range(M)))
    return total


def test_the_chunked_hardware_form_counts_its_matmuls():
    """gdp_impl='chunked': the expanded stream in its own ceil(M L / C) chunks, the queries in ceil(L / C); the rest
    as the model's."""
    D, H, P, N, G, M, K, C = 16, 2, 4, 3, 1, 3, 3, 5
    docs = [13, 1, 10]
    model = maxflops.count(_config(D, H, P, N, G, M, K, mode="prefill", max_target_length=24), segment_lengths=docs)
    b = maxflops.count(_config(D, H, P, N, G, M, K, mode="prefill", max_target_length=24, gdp_impl="chunked",
                               gdp_chunk_size=C), segment_lengths=docs)
    assert b.hardware_components["core_attention"] == sum(_chunked_matmuls(H, P, N, M, C, L) for L in docs)
    assert {k: v for k, v in b.hardware_components.items() if k != "core_attention"} == \
        {k: v for k, v in model.components.items() if k != "core_attention"}


def test_megatron_main_rule_and_the_others_refuse():
    """Megatron-LM main: (4 M + 3) N P per head and token for the core and every conv tap; the rest exact. The peers
    without a rule for these layers refuse them by name."""
    D, H, P, N, G, M, K = 64, 4, 8, 16, 2, 3, 4
    kw = dict(mode="train", max_target_length=32, per_device_batch_size=2)
    exact = maxflops.count(_config(D, H, P, N, G, M, K, **kw))
    main = maxflops.count(_config(D, H, P, N, G, M, K, convention="megatron_main", **kw))
    tokens, channels = 64, M * H * P + (M + 1) * G * N
    assert main.components["core_attention"] == 3 * (4 * M + 3) * H * N * P * tokens
    assert exact.components["core_attention"] == 3 * 2 * (M + 1) * H * N * P * tokens
    assert main.components["gdp_conv"] == 3 * 2 * channels * K * tokens
    for part in ("qkv_proj", "out_proj"):
        assert main.components[part] == exact.components[part]
    for convention in ("maxtext", "megatron", "megatron_bridge", "megatron_pr6148"):
        with pytest.raises(ValueError, match=f"'convention': '{convention}' has no rule for gated delta product"):
            _config(D, H, P, N, G, M, K, convention=convention, **kw)


def test_groups_must_divide_the_heads():
    with pytest.raises(ValueError, match="gdp_num_groups.*3 does not divide gdp_num_heads=4"):
        _config(8, 4, 2, 2, 3, 2, 4)


# --- the reference kernel and XLA ----------------------------------------------------------------------------------

def _kernel_params(naive):
    import jax.numpy as jnp

    p = {"in_proj": naive.w_in, "conv": naive.conv[:, None, :], "A_log": naive.A_log, "dt_bias": naive.dt_bias,
         "norm": naive.norm, "out": naive.wo}
    return {k: jnp.asarray(v) for k, v in p.items()}


@pytest.mark.parametrize("impl,chunk,M", [("recurrent", 1, 3), ("chunked", 4, 3), ("chunked", 5, 2), ("chunked", 32, 3),
                                          ("chunked", 3, 1)])
def test_the_reference_kernel_computes_the_naive_layer(impl, chunk, M):
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from maxflops.families.gdp.proof import gdp

        D, H, P, N, G, K = 8, 4, 3, 4, 2, 4
        naive = NaiveGDP(D, H, P, N, G, M, K)
        x = RNG.normal(size=(2, 13, D))
        want = np.stack([naive.forward(row) for row in x])
        got = np.asarray(gdp(_kernel_params(naive), jax.numpy.asarray(x), H, P, N, G, M, K, impl, chunk))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl,chunk,L,M,K", [("recurrent", 1, 9, 3, 3), ("recurrent", 1, 2, 2, 4),
                                              ("chunked", 4, 13, 3, 4), ("chunked", 8, 5, 2, 2),
                                              ("chunked", 3, 12, 1, 1), ("chunked", 6, 7, 4, 3),
                                              ("chunked", 8, 2, 3, 3)])  # (one chunk: the state read is of zeros)
def test_xla_counts_the_kernel_as_the_engine_prices_it(impl, chunk, L, M, K, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.gdp.proof import gdp
    from maxflops.xla.hlo import count_lowered

    B, D, H, P, N, G = 2, 16, 4, 3, 4, 2
    naive = NaiveGDP(D, H, P, N, G, M, K)
    p = {k: v.astype(jnp.float32) for k, v in _kernel_params(naive).items()}
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = lambda p, x: gdp(p, x, H, P, N, G, M, K, impl, chunk)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(gdp(p, x, H, P, N, G, M, K, impl, chunk) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "gdp_conv", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x).by_scope(names)
    b = maxflops.count(_config(D, H, P, N, G, M, K, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B, gdp_impl=impl, gdp_chunk_size=chunk))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


# --- the Flax model: a gated-delta-product hybrid (no shipped config has one) -------------------------------------

HYBRID = dict(num_decoder_layers=4, attention_layer_pattern="PGP-", ffn_layer_pattern="FF-F", emb_dim=32, vocab_size=64,
              mlp_dim=48, num_query_heads=4, num_kv_heads=2, head_dim=8, gdp_num_heads=8, gdp_head_dim=16,
              gdp_state_dim=16, gdp_num_groups=2, gdp_num_householder=3, gdp_chunk_size=8)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["prefill", "train"])
@pytest.mark.parametrize("knobs,docs", [({}, None), (dict(gdp_impl="chunked"), None),
                                        (dict(gdp_impl="chunked", remat_policy="full"), None),
                                        ({}, (5, 13, 1, 7)), (dict(gdp_impl="chunked"), (5, 13, 1, 7))])
def test_the_flax_model_of_a_hybrid_equals_xla(knobs, docs, mode):
    """The reduced Flax decoder of a hybrid with gated-delta-product, attention and MLP layers (a mixer-only layer
    and an FFN-only one among them): the engine's hardware count equals XLA's, whole rows and packed documents."""
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    extra = dict(segment_lengths=docs) if docs else {}
    c, model, params, tokens = M.build(maxflops.model_config(**HYBRID), abstract=True, mode=mode, **knobs, **extra)
    b = maxflops.count(c, segment_lengths=list(docs)) if docs else maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    xla = count_lowered(fn, *args)
    assert b.hardware_flops == xla.matmul_flops
    if not knobs:
        assert b.total == b.hardware_flops
