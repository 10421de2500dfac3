"""Griffin's recurrent block (letter 'R', RecurrentGemma): the engine against a naive layer that runs it token by token
and counts its own multiply-adds (packed documents and decode included); decode bytes; the refusals; the reference
kernel and a Flax model of recurrent and local-attention layers equal to XLA. transformers' eager RecurrentGemma is
held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveRecurrentBlock:
    """RecurrentGemmaRecurrentBlock one token at a time: linear_y and linear_x, the causal depthwise conv (the taps
    inside the document), the block-diagonal gates, the elementwise recurrence, linear_out. Counts multiply-adds."""

    def __init__(self, D, W, H, K):
        self.D, self.W, self.H, self.K, self.macs = D, W, H, K, 0
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.wy, self.wx, self.conv, self.wo = w(D, W), w(D, W), w(K, W), w(W, D)
        self.gate_x, self.gate_a, self.param = w(H, W // H, W // H), w(H, W // H, W // H), w(W)

    def matvec(self, v, M):
        self.macs += M.size
        return v @ M

    def forward(self, xs, state=None):
        """A document (or the new token after ``state``: the conv's last inputs and h)."""
        past, h = state if state else ([], np.zeros(self.W))
        out = []
        for x in xs:
            y = self.matvec(x, self.wy)
            xb = self.matvec(x, self.wx)
            past = (past + [xb])[-self.K:]
            conv = np.zeros(self.W)
            for tap, value in enumerate(reversed(past)):  # taps inside the document only
                conv += self.conv[self.K - 1 - tap] * value
                self.macs += self.W
            blocks = conv.reshape(self.H, -1)
            gx = 1 / (1 + np.exp(-np.concatenate([self.matvec(b, g) for b, g in zip(blocks, self.gate_x)])))
            ga = 1 / (1 + np.exp(-np.concatenate([self.matvec(b, g) for b, g in zip(blocks, self.gate_a)])))
            a = np.exp(-8 * ga * np.log1p(np.exp(self.param)))
            h = a * h + np.sqrt(1 - a * a) * gx * conv
            out.append(self.matvec(h * y, self.wo))
        return np.array(out), (past, h)


def _config(D, W, H, K, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="R", ffn_layer_pattern="-", emb_dim=D,
                                 vocab_size=8, rglru_width=W, rglru_num_heads=H, rglru_conv_kernel=K, **kw)


@pytest.mark.parametrize("D,W,H,K,docs", [(8, 8, 2, 4, [9]), (6, 9, 3, 3, [1, 5, 2]), (10, 4, 1, 1, [4, 4]),
                                          (6, 12, 4, 5, [3, 11])])
def test_model_flops_are_the_naive_layers_multiply_adds(D, W, H, K, docs):
    layer = NaiveRecurrentBlock(D, W, H, K)
    for L in docs:
        layer.forward(RNG.normal(size=(L, D)))
    kw = dict(mode="prefill", max_target_length=sum(docs))
    b = maxflops.count(_config(D, W if W != D else 0, H, K, **kw), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * layer.macs
    assert b.attention == 0  # the recurrence is elementwise: no token mixing by contraction
    assert b.hardware_flops == b.total
    train = maxflops.count(_config(D, W, H, K, mode="train", max_target_length=sum(docs)), segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs


@pytest.mark.parametrize("kvs", [[0, 3], [6]])
def test_decode_is_one_step_and_reads_its_state(kvs):
    D, W, H, K = 8, 12, 3, 4
    macs = 0
    for kv in kvs:
        layer = NaiveRecurrentBlock(D, W, H, K)
        _, state = layer.forward(RNG.normal(size=(kv, D)))
        layer.macs = 0
        layer.forward(RNG.normal(size=(1, D)), state)
        macs += layer.macs
    cfg = _config(D, W, H, K, mode="decode", per_device_batch_size=len(kvs), state_bytes=4, weight_bytes=2)
    assert maxflops.count(cfg, segment_lengths=kvs).total - 2 * len(kvs) * D * 8 == 2 * macs
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    assert t["state"] == len(kvs) * 2 * (K - 1 + 1) * W * 4  # the conv's last K - 1 inputs and h, read and written


def test_bad_shapes_name_their_key():
    with pytest.raises(ValueError, match="'rglru_num_heads': 3 does not divide"):
        _config(8, 8, 3, 4)
    with pytest.raises(ValueError, match="'convention': 'megatron'"):
        _config(8, 8, 2, 4, convention="megatron")


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("L,K", [(9, 4), (7, 3), (2, 4)])
def test_xla_counts_the_kernel_as_the_engine_prices_it(L, K, train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.rglru.proof import params, recurrent_block
    from maxflops.xla.hlo import count_lowered

    B, D, W, H = 2, 8, 12, 3
    prm = params(lambda name, shape: jnp.asarray(RNG.normal(size=shape) * 0.3, jnp.float32), D, W, H, K)
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = lambda p, x: recurrent_block(p, x, H, K)  # noqa: E731
    if train:
        fn = jax.grad(lambda p, x: jnp.sum(recurrent_block(p, x, H, K) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "rglru_conv", "rglru_gates", "out_proj"]
    got = count_lowered(fn, prm, x).by_scope(names)
    b = maxflops.count(_config(D, W, H, K, mode="train" if train else "prefill", max_target_length=L,
                               per_device_batch_size=B))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_a_flax_model_of_griffin_layers_equals_xla(mode, knobs):
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    base = maxflops.model_config(num_decoder_layers=3, attention_layer_pattern="RRL", sliding_window_size=4,
                                 emb_dim=64, num_query_heads=4, num_kv_heads=1, head_dim=16, mlp_dim=96,
                                 vocab_size=500, rglru_width=48, rglru_num_heads=4, rglru_conv_kernel=4)
    c, model, params, tokens = M.build(base, abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
