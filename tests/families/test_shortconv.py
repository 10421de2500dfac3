"""The gated short conv (LFM2): the engine's model FLOPs against a naive per-token layer that counts its own
multiply-adds (packed documents and decode included); the reference kernel's XLA count against the hardware figure,
forward and train (the conv as XLA runs it; torch's padded conv is held in the zoo); a Flax model of short-conv and
attention layers; decode bytes."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveShortConv:
    """Lfm2ShortConv token by token over one document, counting the multiply-adds of its matmuls and its conv."""

    def __init__(self, D, K):
        self.D, self.K, self.macs = D, K, 0
        self.w_in, self.w_out = RNG.normal(size=(D, 3 * D)), RNG.normal(size=(D, D))
        self.w_conv = RNG.normal(size=(K, D))

    def matvec(self, x, w):
        self.macs += w.shape[0] * w.shape[1]
        return x @ w

    def forward(self, xs, history=()):
        """Outputs for the tokens xs [L, D] after ``history`` (earlier tokens' B x, a decode's conv state)."""
        D, K = self.D, self.K
        seen, out = [np.asarray(h) for h in history], []
        for x in xs:
            bcx = self.matvec(x, self.w_in)
            b, c, v = bcx[:D], bcx[D:2 * D], bcx[2 * D:]
            seen.append(b * v)  # elementwise: no multiply-add of a matmul
            y = np.zeros(D)
            for tap in range(min(K, len(seen))):  # the causal window: the non-padding taps
                y += self.w_conv[K - 1 - tap] * seen[-1 - tap]
                self.macs += D
            out.append(self.matvec(c * y, self.w_out))
        return np.array(out), seen


def _config(D, K, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="V", ffn_layer_pattern="-",
                                 emb_dim=D, vocab_size=8, short_conv_kernel=K, **kw)


@pytest.mark.parametrize("D,K,docs", [(6, 3, [7]), (5, 4, [1, 5, 2, 9]), (4, 1, [3, 3])])
def test_model_flops_are_the_naive_layers_multiply_adds(D, K, docs):
    layer = NaiveShortConv(D, K)
    for L in docs:
        layer.forward(RNG.normal(size=(L, D)))
    tokens = sum(docs)
    b = maxflops.count(_config(D, K, mode="prefill", max_target_length=tokens), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * layer.macs
    assert b.attention == 0 and b.hardware_flops == b.total
    train = maxflops.count(_config(D, K, mode="train", max_target_length=tokens), segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs


@pytest.mark.parametrize("D,K,kvs", [(6, 3, [0, 1, 8]), (5, 4, [2])])
def test_decode_is_the_naive_layers_new_token(D, K, kvs):
    macs = 0
    for kv in kvs:
        layer = NaiveShortConv(D, K)
        _, seen = layer.forward(RNG.normal(size=(kv, D)))
        layer.macs = 0
        layer.forward(RNG.normal(size=(1, D)), history=seen[-(K - 1):] if K > 1 and seen else ())
        macs += layer.macs
    b = maxflops.count(_config(D, K, mode="decode", per_device_batch_size=len(kvs)), segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    t = maxflops.decode_traffic(_config(D, K, mode="decode", per_device_batch_size=len(kvs), state_bytes=4,
                                        weight_bytes=2), segment_lengths=kvs)
    assert t.components["state"] == len(kvs) * 2 * (K - 1) * D * 4  # the conv's last K - 1 inputs, read and written


def test_no_peer_convention_prices_it():
    with pytest.raises(ValueError, match="convention"):
        maxflops.count(_config(6, 3, convention="megatron_main"))


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
def test_xla_counts_the_kernel_as_the_engine_prices_it(train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.shortconv.proof import params, short_conv
    from maxflops.xla.hlo import count_lowered

    B, L, D, K = 2, 9, 8, 3
    prm = params(lambda name, shape: jnp.asarray(RNG.normal(size=shape) * 0.3, jnp.float32), D, K)
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = lambda p, x: short_conv(p, x, K)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(short_conv(p, x, K) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "short_conv", "out_proj"]
    got = count_lowered(fn, prm, x).by_scope(names)
    b = maxflops.count(_config(D, K, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["prefill", "train"])
def test_a_flax_model_of_short_conv_and_attention_layers_equals_xla(mode):
    """LFM2's layout (short-conv layers, an attention layer, a gated MLP in each) as maxflops.xla.model builds it:
    model == hardware == XLA's count of the step, component by component."""
    from maxflops.xla import model as M
    from maxflops.xla.cli import scopes
    from maxflops.xla.hlo import count_lowered

    cfg = maxflops.model_config(num_decoder_layers=4, attention_layer_pattern="VVGV", emb_dim=16, vocab_size=32,
                                num_query_heads=4, num_kv_heads=2, head_dim=4, mlp_dim=24,
                                mlp_activations=("silu", "linear"), short_conv_kernel=3)
    c, model, params, tokens = M.build(cfg, abstract=True, mode=mode)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    xla = count_lowered(fn, *args)
    assert b.total == b.hardware_flops == xla.matmul_flops
    scoped = xla.by_scope(scopes(), innermost=True)
    assert scoped.pop("other") == 0
    assert {k: v for k, v in scoped.items() if v} == b.by_kind(hardware=True)
