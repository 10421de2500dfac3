"""Lightning attention: the engine's model FLOPs against a naive per-token implementation that counts its own
multiply-adds (packed documents, decode); the reference kernel (recurrent and blocked) against that implementation's
output; XLA's count of the kernel against the engine's hardware figure (forward and train); the blocked form's
count against an enumeration of its blocks."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveLightning:
    """A lightning attention layer written token by token in numpy, every contraction a loop of multiply-adds that
    ``macs`` counts per part: the decayed linear attention as MiniMax-01's report states it, not a copy of a kernel."""

    def __init__(self, D, H, d):
        self.D, self.H, self.d = D, H, d
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.wqkv, self.wgate, self.wout = w(D, 3 * H * d), w(D, H * d), w(H * d, D)
        self.norm = RNG.normal(size=H * d)
        self.rate = (2.0 ** (-8.0 / H)) ** np.arange(1, H + 1)
        self.macs = {}

    def matvec(self, part, v, W):
        self.macs[part] = self.macs.get(part, 0) + W.size
        return v @ W

    def forward(self, xs):
        H, d, L = self.H, self.d, len(xs)
        qkv = np.stack([self.matvec("qkv_proj", x, self.wqkv) for x in xs])
        qkv = (qkv / (1 + np.exp(-qkv))).reshape(L, H, 3 * d)
        gate = np.stack([self.matvec("qkv_proj", x, self.wgate) for x in xs])
        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
        S = np.zeros((H, d, d))
        out = np.zeros((L, H, d))
        for t in range(L):
            for h in range(H):
                S[h] = np.exp(-self.rate[h]) * S[h] + np.outer(k[t, h], v[t, h])
                out[t, h] = self.matvec("core_attention", q[t, h], S[h])
        out = out.reshape(L, H * d)
        out = out / np.sqrt((out ** 2).mean(-1, keepdims=True) + 1e-5) * self.norm / (1 + np.exp(-gate))
        return np.stack([self.matvec("out_proj", o, self.wout) for o in out])


def _config(D, H, d, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="N", ffn_layer_pattern="-", emb_dim=D,
                                 vocab_size=8, lightning_num_heads=H, lightning_head_dim=d, **kw)


@pytest.mark.parametrize("D,H,d,docs", [(8, 2, 3, [13]), (6, 3, 2, [1, 2, 9]), (10, 1, 4, [7, 7])])
def test_model_flops_equal_a_naive_layer_counting_its_multiply_adds(D, H, d, docs):
    naive = NaiveLightning(D, H, d)
    for L in docs:
        naive.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(_config(D, H, d, mode="prefill", max_target_length=sum(docs)), segment_lengths=docs)
    assert {k: v for k, v in b.components.items() if k != "logits"} == {k: 2 * v for k, v in naive.macs.items()}
    assert b.hardware_flops == b.total


def test_heads_and_width_default_to_the_attention_s():
    a = maxflops.count(maxflops.model_config(attention_layer_pattern="NG", num_query_heads=4, head_dim=8, emb_dim=32))
    b = maxflops.count(maxflops.model_config(attention_layer_pattern="NG", num_query_heads=4, head_dim=8, emb_dim=32,
                                             lightning_num_heads=4, lightning_head_dim=8))
    assert a.components == b.components


def test_decode_is_one_step_of_the_recurrence():
    D, H, d = 8, 2, 3

    def macs(L):
        naive = NaiveLightning(D, H, d)
        if L:
            naive.forward(RNG.normal(size=(L, D)))
        return naive.macs

    for kv in (0, 5):
        longer, shorter = macs(kv + 1), macs(kv)
        last = {k: 2 * (v - shorter.get(k, 0)) for k, v in longer.items()}
        b = maxflops.count(_config(D, H, d, mode="decode", decode_kv_length=kv, per_device_batch_size=1))
        assert {k: v for k, v in b.components.items() if k != "logits"} == last
    t = maxflops.decode_traffic(_config(D, H, d, mode="decode", decode_kv_length=100, per_device_batch_size=3,
                                        state_bytes=4))
    assert t.components["state"] == 3 * 2 * 4 * H * d * d


def test_the_blocked_form_counts_each_block():
    """Blocks enumerated one by one: four matmuls each, the intra-block ones over the whole b x b square."""
    D, H, d, B = 16, 2, 4, 5
    docs = [13, 1, 10]
    b = maxflops.count(_config(D, H, d, mode="prefill", max_target_length=24, lightning_impl="blocked",
                               lightning_block_size=B), segment_lengths=docs)
    want = 0
    for L in docs:
        for start in range(0, L, B):
            n = min(B, L - start)
            want += H * (2 * n * n * d + 2 * n * n * d + 2 * n * d * d + 2 * n * d * d)
    assert b.hardware_components["core_attention"] == want


def test_no_peer_convention_prices_it():
    for convention in ("maxtext", "megatron", "megatron_bridge"):
        with pytest.raises(ValueError, match=f"'convention': '{convention}' has no rule for lightning attention"):
            _config(8, 2, 3, convention=convention)


# --- the reference kernel and XLA ----------------------------------------------------------------------------------

def _kernel_params(naive):
    import jax.numpy as jnp

    return {"qkv": jnp.asarray(naive.wqkv), "gate": jnp.asarray(naive.wgate), "norm": jnp.asarray(naive.norm),
            "out": jnp.asarray(naive.wout)}


@pytest.mark.parametrize("impl,block", [("recurrent", 1), ("blocked", 4), ("blocked", 5), ("blocked", 32)])
def test_the_reference_kernel_computes_the_naive_layer(impl, block):
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from maxflops.families.lightning.proof import lightning

        D, H, d = 8, 2, 3
        naive = NaiveLightning(D, H, d)
        x = RNG.normal(size=(2, 13, D))
        want = np.stack([naive.forward(row) for row in x])
        got = np.asarray(lightning(_kernel_params(naive), jax.numpy.asarray(x), H, d, impl, block))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("impl,block,L", [("recurrent", 1, 9), ("blocked", 4, 13), ("blocked", 8, 5), ("blocked", 3, 12)])
def test_xla_counts_the_kernel_as_the_engine_prices_it(impl, block, L, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.lightning.proof import lightning
    from maxflops.xla.hlo import count_lowered

    B, D, H, d = 2, 16, 2, 4
    naive = NaiveLightning(D, H, d)
    p = {k: v.astype(jnp.float32) for k, v in _kernel_params(naive).items()}
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    # a prefill continuing from a state and keeping its last one (transformers' forward runs every block's update;
    # with the state an input, the first block's read of it has both gradients, as the compiled rule prices)
    S0 = jnp.zeros((B, H, d, d), jnp.float32)
    fn = lambda p, x, S0: lightning(p, x, H, d, impl, block, S0, return_state=True)  # noqa: E731
    if train:
        def loss(p, x, S0):
            out, S = lightning(p, x, H, d, impl, block, S0, return_state=True)
            return jnp.sum(out ** 2) + jnp.sum(S * S)  # (a plain sum's cotangent of ones lets JAX drop a matmul)
        fn = jax.grad(loss, argnums=(0, 1, 2))
    names = ["qkv_proj", "core_attention", "out_proj"]
    got = count_lowered(fn, p, x, S0).by_scope(names)
    b = maxflops.count(_config(D, H, d, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B, lightning_impl=impl, lightning_block_size=block))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}
