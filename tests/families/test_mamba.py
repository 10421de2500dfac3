"""Mamba-2 (SSD) and Mamba-1 (the selective scan): the engine's model FLOPs against a naive per-token implementation that counts its own
multiply-adds; the reference kernel against that implementation's output; XLA's count of the kernel (recurrent and
chunked, forward and train, packed documents) against the engine's hardware figure; and the hybrid layer shapes
(a mixer alone, an FFN alone) against the same layers counted one by one."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from repo import quiet_config

RNG = np.random.default_rng(0)


class NaiveMamba2:
    """A Mamba-2 layer written token by token in numpy, every contraction a Python-visible loop of multiply-adds
    (``macs`` counts them per part). Not a copy of any kernel: the recurrence as the paper states it."""

    def __init__(self, D, H, P, N, G, K):
        self.D, self.H, self.P, self.N, self.G, self.K = D, H, P, N, G, K
        d_in = H * P
        self.w_in = RNG.normal(size=(D, 2 * d_in + 2 * G * N + H)) * 0.3
        self.conv = RNG.normal(size=(K, d_in + 2 * G * N)) * 0.3
        self.dt_bias, self.A_log, self.D_skip = (RNG.normal(size=H) * 0.3 for _ in range(3))
        self.norm = RNG.normal(size=d_in)
        self.w_out = RNG.normal(size=(d_in, D)) * 0.3
        self.macs = {}

    def _mac(self, part, n):
        self.macs[part] = self.macs.get(part, 0) + n

    def matvec(self, part, v, W):  # v [n] @ W [n, m], one multiply-add per element of W
        self._mac(part, W.size)
        return v @ W

    def forward(self, xs):
        """One document xs [L, D] -> [L, D]."""
        D, H, P, N, G, K = self.D, self.H, self.P, self.N, self.G, self.K
        d_in = H * P
        proj = np.stack([self.matvec("qkv_proj", x, self.w_in) for x in xs])
        z, xbc, dt = proj[:, :d_in], proj[:, d_in:2 * d_in + 2 * G * N], proj[:, 2 * d_in + 2 * G * N:]
        conv = np.zeros_like(xbc)
        for t in range(len(xs)):
            for k in range(K):  # tap k reads token t - (K - 1 - k); taps before the document's start read nothing
                s = t - (K - 1 - k)
                if s >= 0:
                    conv[t] += self.conv[k] * xbc[s]
                    self._mac("ssm_conv", xbc.shape[1])
        conv = conv / (1 + np.exp(-conv))  # silu
        x, Bg, Cg = conv[:, :d_in].reshape(-1, H, P), conv[:, d_in:d_in + G * N], conv[:, d_in + G * N:]
        dt = np.log1p(np.exp(dt + self.dt_bias))
        A = -np.exp(self.A_log)
        h = np.zeros((H, P, N))
        ys = []
        for t in range(len(xs)):
            y = np.zeros((H, P))
            for head in range(H):
                g = head // (H // G)
                b, c = Bg[t, g * N:(g + 1) * N], Cg[t, g * N:(g + 1) * N]
                h[head] = np.exp(dt[t, head] * A[head]) * h[head] + np.outer(dt[t, head] * x[t, head], b)
                for p_ in range(P):  # the state read: y = h C
                    y[head, p_] = self.matvec("core_attention", h[head, p_], c[:, None])[0]
                y[head] += self.D_skip[head] * x[t, head]
            ys.append(y.reshape(-1))
        y = np.stack(ys) * (z / (1 + np.exp(-z)))
        grp = y.reshape(len(xs), G, -1)
        y = (grp / np.sqrt((grp ** 2).mean(-1, keepdims=True) + 1e-5)).reshape(len(xs), -1) * self.norm
        return np.stack([self.matvec("out_proj", v, self.w_out) for v in y])


SHAPES = [  # D, H, P, N, G, K, document lengths
    (8, 4, 3, 5, 2, 4, [13]),
    (6, 6, 2, 3, 3, 3, [1, 2, 9]),
    (10, 2, 5, 4, 1, 1, [7, 7]),
    (8, 4, 2, 6, 4, 5, [3, 11]),
]


@pytest.mark.parametrize("D,H,P,N,G,K,docs", SHAPES)
def test_model_flops_equal_a_naive_layer_counting_its_multiply_adds(D, H, P, N, G, K, docs):
    naive = NaiveMamba2(D, H, P, N, G, K)
    for L in docs:
        naive.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(maxflops.model_config(
        num_decoder_layers=1, attention_layer_pattern="M", ffn_layer_pattern="-", emb_dim=D, vocab_size=8,
        mamba_num_heads=H, mamba_head_dim=P, mamba_state_dim=N, mamba_n_groups=G, mamba_conv_kernel=K,
        mode="prefill", max_target_length=sum(docs)), segment_lengths=docs)
    assert {k: v for k, v in b.components.items() if k != "logits"} == {k: 2 * v for k, v in naive.macs.items()}
    assert b.hardware_flops == b.total  # the default kernel (recurrent, valid conv) runs exactly the model's work


def test_decode_is_one_step_of_the_recurrence():
    """A decode step's FLOPs are the last token's in the naive layer: a document of kv + 1 tokens less one of kv
    (the layer is causal, so the first kv tokens cost the same in both)."""
    D, H, P, N, G, K = 8, 4, 3, 5, 2, 4
    kw = dict(num_decoder_layers=1, attention_layer_pattern="M", ffn_layer_pattern="-", emb_dim=D, vocab_size=8,
              mamba_num_heads=H, mamba_head_dim=P, mamba_state_dim=N, mamba_n_groups=G, mamba_conv_kernel=K)

    def macs(L):
        naive = NaiveMamba2(D, H, P, N, G, K)
        if L:
            naive.forward(RNG.normal(size=(L, D)))
        return naive.macs

    for kv in (0, 2, 40):  # the new token's conv reads the cached inputs: 0, 2, then K - 1 of them
        longer, shorter = macs(kv + 1), macs(kv)
        last = {k: 2 * (v - shorter.get(k, 0)) for k, v in longer.items()}
        b = maxflops.count(maxflops.model_config(mode="decode", decode_kv_length=kv, per_device_batch_size=1, **kw))
        assert {k: v for k, v in b.components.items() if k != "logits"} == last
    t = maxflops.decode_traffic(maxflops.model_config(mode="decode", decode_kv_length=100, per_device_batch_size=3,
                                                      state_bytes=4, **kw))
    assert t.components["state"] == 3 * 2 * 4 * (H * P * N + (K - 1) * (H * P + 2 * G * N))


def test_hybrid_layer_shapes_equal_their_layers_counted_one_by_one():
    """Nemotron-H's separate layers: 'M-*-' (Mamba alone, an MLP alone, attention alone, an MLP alone) counts as the
    sum of one-layer models of each, and as the fused layers 'MG' with their FFNs when the FFNs are dense."""
    common = dict(emb_dim=64, vocab_size=128, mlp_dim=96, num_query_heads=4, num_kv_heads=2, head_dim=16,
                  mamba_num_heads=8, mamba_head_dim=16, mamba_state_dim=8, mamba_n_groups=2, max_target_length=32,
                  per_device_batch_size=2)
    for mode in ("train", "prefill"):
        split = maxflops.count(maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="M-G-",
                                                     ffn_layer_pattern="-F-F", mode=mode, **common))
        fused = maxflops.count(maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="MG", mode=mode,
                                                     **common))
        assert split.components == fused.components and split.total == fused.total
        one = [maxflops.count(quiet_config(num_decoder_layers=1, attention_layer_pattern=a,
                                                    ffn_layer_pattern=f, mode=mode, **common))
               for a, f in (("M", "-"), ("-", "F"), ("G", "-"), ("-", "F"))]
        head = one[0].components["logits"]
        assert split.total == sum(b.total - head for b in one) + head


def test_bad_shapes_name_their_key():
    with pytest.raises(ValueError, match="'mamba_n_groups': 3 does not divide mamba_num_heads=8"):
        maxflops.model_config(attention_layer_pattern="M", mamba_num_heads=8, mamba_n_groups=3)
    with pytest.raises(ValueError, match="layer 1 has neither a mixer"):
        maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="M-", ffn_layer_pattern="F-")


# --- the reference kernel and XLA ----------------------------------------------------------------------------------

def _kernel_params(naive):
    import jax.numpy as jnp

    return {"in_proj": jnp.asarray(naive.w_in), "conv": jnp.asarray(naive.conv[:, None, :]),
            "dt_bias": jnp.asarray(naive.dt_bias), "A_log": jnp.asarray(naive.A_log),
            "D_skip": jnp.asarray(naive.D_skip), "norm": jnp.asarray(naive.norm), "out": jnp.asarray(naive.w_out)}


@pytest.mark.parametrize("impl,chunk", [("recurrent", 1), ("chunked", 4), ("chunked", 5), ("chunked", 32)])
def test_the_reference_kernel_computes_the_naive_layer(impl, chunk):
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from maxflops.families.mamba2.proof import mamba2

        D, H, P, N, G, K = 8, 4, 3, 5, 2, 4
        naive = NaiveMamba2(D, H, P, N, G, K)
        x = RNG.normal(size=(2, 13, D))
        want = np.stack([naive.forward(row) for row in x])
        got = np.asarray(mamba2(_kernel_params(naive), jax.numpy.asarray(x), H, P, N, G, K, impl, chunk))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


def _engine(mode, **kw):
    base = dict(num_decoder_layers=1, emb_dim=16, vocab_size=32, attention_layer_pattern="M", ffn_layer_pattern="-")
    return maxflops.count(maxflops.model_config(**{**base, "mode": mode, **kw}))


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl,chunk,L,K", [("recurrent", 1, 9, 3), ("recurrent", 1, 2, 4), ("chunked", 4, 13, 4),
                                            ("chunked", 8, 5, 2), ("chunked", 3, 12, 1)])
def test_xla_counts_the_kernel_as_the_engine_prices_it(impl, chunk, L, K, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.mamba2.proof import mamba2
    from maxflops.xla.hlo import count_lowered

    B, D, H, P, N, G = 2, 16, 4, 3, 5, 2
    naive = NaiveMamba2(D, H, P, N, G, K)
    p = {k: v.astype(jnp.float32) for k, v in _kernel_params(naive).items()}
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = lambda p, x: mamba2(p, x, H, P, N, G, K, impl, chunk)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(mamba2(p, x, H, P, N, G, K, impl, chunk) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "ssm_conv", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x).by_scope(names)
    b = _engine("train" if train else "prefill", max_target_length=L, per_device_batch_size=B, emb_dim=D,
                mamba_num_heads=H, mamba_head_dim=P, mamba_state_dim=N, mamba_n_groups=G, mamba_conv_kernel=K,
                mamba_impl=impl, mamba_chunk_size=chunk)
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


# --- Mamba-1 (the selective scan) ------------------------------------------------------------------------------------

class NaiveMamba1(NaiveMamba2):
    """A Mamba-1 layer token by token in numpy, counting the multiply-adds of its contractions (the paper's S6
    recurrence: per channel a state of N, its decay and input from the token)."""

    def __init__(self, D, inner, N, R, K):
        self.D, self.inner, self.N, self.R, self.K = D, inner, N, R, K
        self.w_in = RNG.normal(size=(D, 2 * inner)) * 0.3
        self.conv = RNG.normal(size=(K, inner)) * 0.3
        self.x_proj = RNG.normal(size=(inner, R + 2 * N)) * 0.3
        self.dt_proj = RNG.normal(size=(R, inner)) * 0.3
        self.dt_bias, self.D_skip = RNG.normal(size=inner) * 0.3, RNG.normal(size=inner)
        self.A_log = RNG.normal(size=(inner, N)) * 0.3
        self.w_out = RNG.normal(size=(inner, D)) * 0.3
        self.macs = {}

    def forward(self, xs):
        inner, N, R, K = self.inner, self.N, self.R, self.K
        proj = np.stack([self.matvec("qkv_proj", x, self.w_in) for x in xs])
        x, z = proj[:, :inner], proj[:, inner:]
        conv = np.zeros_like(x)
        for t in range(len(xs)):
            for k in range(K):
                if t - (K - 1 - k) >= 0:
                    conv[t] += self.conv[k] * x[t - (K - 1 - k)]
                    self._mac("ssm_conv", inner)
        x = conv / (1 + np.exp(-conv))
        h = np.zeros((inner, N))
        A = -np.exp(self.A_log)
        ys = []
        for t in range(len(xs)):
            dbc = self.matvec("qkv_proj", x[t], self.x_proj)
            dt = np.log1p(np.exp(self.matvec("qkv_proj", dbc[:R], self.dt_proj) + self.dt_bias))
            b, c = dbc[R:R + N], dbc[R + N:]
            h = np.exp(dt[:, None] * A) * h + (dt * x[t])[:, None] * b[None, :]
            y = np.array([self.matvec("core_attention", h[i], c[:, None])[0] for i in range(inner)])
            ys.append((y + self.D_skip * x[t]) * (z[t] / (1 + np.exp(-z[t]))))
        return np.stack([self.matvec("out_proj", v, self.w_out) for v in ys])


MAMBA1_SHAPES = [(8, 12, 4, 3, 4, [13]), (6, 10, 3, 2, 2, [1, 5, 9]), (10, 8, 5, 1, 1, [7])]


@pytest.mark.parametrize("D,inner,N,R,K,docs", MAMBA1_SHAPES)
def test_mamba1_model_flops_equal_a_naive_layer(D, inner, N, R, K, docs):
    naive = NaiveMamba1(D, inner, N, R, K)
    for L in docs:
        naive.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(maxflops.model_config(
        num_decoder_layers=1, attention_layer_pattern="A", ffn_layer_pattern="-", emb_dim=D, vocab_size=8,
        mamba1_inner_dim=inner, mamba1_state_dim=N, mamba1_dt_rank=R, mamba1_conv_kernel=K, mode="prefill",
        max_target_length=sum(docs)), segment_lengths=docs)
    assert {k: v for k, v in b.components.items() if k != "logits"} == {k: 2 * v for k, v in naive.macs.items()}
    assert b.hardware_flops == b.total


def test_mamba1_kernel_computes_the_naive_layer():
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from maxflops.families.mamba1.proof import mamba1

        D, inner, N, R, K = 8, 12, 4, 3, 4
        naive = NaiveMamba1(D, inner, N, R, K)
        x = RNG.normal(size=(2, 13, D))
        want = np.stack([naive.forward(row) for row in x])
        p = {"in_proj": naive.w_in, "conv": naive.conv[:, None, :], "x_proj": naive.x_proj, "dt_proj": naive.dt_proj,
             "dt_bias": naive.dt_bias, "A_log": naive.A_log, "D_skip": naive.D_skip, "out": naive.w_out}
        got = mamba1({k: jax.numpy.asarray(v) for k, v in p.items()}, jax.numpy.asarray(x), inner, N, R, K)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("L,K", [(9, 3), (2, 4), (13, 1)])
def test_xla_counts_the_mamba1_kernel_as_the_engine_prices_it(L, K, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.mamba1.proof import mamba1
    from maxflops.xla.hlo import count_lowered

    B, D, inner, N, R = 2, 16, 12, 4, 3
    naive = NaiveMamba1(D, inner, N, R, K)
    p = {"in_proj": naive.w_in, "conv": naive.conv[:, None, :], "x_proj": naive.x_proj, "dt_proj": naive.dt_proj,
         "dt_bias": naive.dt_bias, "A_log": naive.A_log, "D_skip": naive.D_skip, "out": naive.w_out}
    p = {k: jnp.asarray(v, jnp.float32) for k, v in p.items()}
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = lambda p, x: mamba1(p, x, inner, N, R, K)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(mamba1(p, x, inner, N, R, K) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "ssm_conv", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x).by_scope(names)
    b = _engine("train" if train else "prefill", attention_layer_pattern="A", max_target_length=L,
                per_device_batch_size=B, emb_dim=D, mamba1_inner_dim=inner, mamba1_state_dim=N, mamba1_dt_rank=R,
                mamba1_conv_kernel=K)
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


# --- a second mixer beside the first (Falcon-H1) ----------------------------------------------------------------------

def test_parallel_mixers_are_the_sum_of_their_layers():
    common = dict(emb_dim=64, vocab_size=128, mlp_dim=96, num_query_heads=4, num_kv_heads=2, head_dim=16,
                  mamba_num_heads=8, mamba_head_dim=16, mamba_state_dim=8, mamba_n_groups=2, max_target_length=32,
                  per_device_batch_size=2)
    for mode in ("train", "prefill", "decode"):
        both = maxflops.count(maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="G",
                                                    parallel_layer_pattern="M", mode=mode, **common))
        attn = maxflops.count(quiet_config(num_decoder_layers=2, attention_layer_pattern="G", mode=mode,
                                                    **common))
        ssm = maxflops.count(quiet_config(num_decoder_layers=2, attention_layer_pattern="M",
                                                   ffn_layer_pattern="-", mode=mode, **common))
        assert both.total == attn.total + ssm.total - ssm.components["logits"]
        assert both.layers[0].parallel == "mamba2"


@pytest.mark.slow
@pytest.mark.parametrize("knobs", [{}, dict(mamba_impl="chunked", mamba_chunk_size=4, remat_policy="full",
                                           attention_impl="blocked", mamba_conv_impl="padded")])
def test_xla_counts_the_flax_model_of_a_hybrid_as_the_engine_prices_it(knobs):
    """A Flax model with every layer shape (Mamba-2 alone, Mamba-1 alone, an MLP alone, MoE alone, attention beside
    Mamba-2 with a dense FFN): hardware == XLA, train step."""
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    if knobs.get("mamba_conv_impl") == "padded":  # the Flax kernels' conv reads only the valid taps
        knobs = {**knobs, "mamba_conv_impl": "valid"}
    cfg = maxflops.model_config(num_decoder_layers=5, attention_layer_pattern="MA--G", ffn_layer_pattern="--FEF",
                                parallel_layer_pattern="----M", num_experts=4, num_experts_per_tok=2, mode="train",
                                **knobs)
    c, model, params, tokens = M.build(cfg, abstract=True)
    fn, args = M.step_program(model, params, tokens, "train", abstract=True)
    xla = count_lowered(fn, *args)
    assert maxflops.count(c).hardware_flops == xla.matmul_flops


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["recurrent", "chunked"])
def test_xla_counts_packed_documents_through_the_hybrid_flax_model(impl):
    """Packed documents (one THD row, each document through the mixers on its own, as varlen kernels run them):
    hardware == XLA for Mamba-2, Mamba-1 and attention beside Mamba-2."""
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    cfg = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="MAG-", ffn_layer_pattern="--FF",
                                parallel_layer_pattern="--M-", mode="train", mamba_impl=impl)
    docs = (5, 1, 7)
    c, model, params, tokens = M.build(cfg, abstract=True, segment_lengths=docs)
    fn, args = M.step_program(model, params, tokens, "train", abstract=True)
    xla = count_lowered(fn, *args)
    assert maxflops.count(c, segment_lengths=docs).hardware_flops == xla.matmul_flops
