"""RWKV-4's time mix (letter 'W') and its channel mix: the engine against a naive layer that runs it token by token
and counts its own multiply-adds (packed documents and decode included); the state bytes; the reference kernel and a
Flax model of RWKV layers equal to XLA. transformers' eager RWKV is held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveRwkv:
    """RwkvSelfAttention and RwkvFeedForward one token at a time: the shifted mixes, key/value/receptance, the WKV
    recurrence (elementwise), output; the channel mix's key (squared ReLU), value and receptance. Counts
    multiply-adds."""

    def __init__(self, D, A, I):
        self.D, self.A, self.macs = D, A, 0
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.key, self.value, self.receptance, self.output = w(D, A), w(D, A), w(D, A), w(A, D)
        self.ffn_key, self.ffn_value, self.ffn_receptance = w(D, I), w(I, D), w(D, D)
        self.decay, self.first = w(A), w(A)

    def matvec(self, v, M):
        self.macs += M.size
        return v @ M

    def forward(self, xs, state=None):
        prev, prev_ffn, num, den = state or (np.zeros(self.D), np.zeros(self.D), np.zeros(self.A), np.zeros(self.A))
        for x in xs:
            mix = 0.5 * (x + prev)
            k, v, r = (self.matvec(mix, W) for W in (self.key, self.value, self.receptance))
            wkv = (num + np.exp(self.first + k) * v) / (den + np.exp(self.first + k))
            num, den = np.exp(-np.exp(self.decay)) * num + np.exp(k) * v, np.exp(-np.exp(self.decay)) * den + np.exp(k)
            h = x + self.matvec(1 / (1 + np.exp(-r)) * wkv, self.output)
            mix = 0.5 * (h + prev_ffn)
            kf = np.square(np.maximum(self.matvec(mix, self.ffn_key), 0))
            gate = 1 / (1 + np.exp(-self.matvec(mix, self.ffn_receptance)))
            self.matvec(kf, self.ffn_value) * gate
            prev, prev_ffn = x, h
        return prev, prev_ffn, num, den


def _config(D, A, I, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="W", emb_dim=D, vocab_size=8,
                                 rwkv_attention_dim=A if A != D else 0, mlp_dim=I, mlp_activations=("relu2",), **kw)


@pytest.mark.parametrize("D,A,I,docs", [(8, 8, 12, [9]), (6, 10, 7, [1, 5, 2]), (10, 4, 16, [4, 4])])
def test_model_flops_are_the_naive_layers_multiply_adds(D, A, I, docs):
    layer = NaiveRwkv(D, A, I)
    for L in docs:
        layer.forward(RNG.normal(size=(L, D)))
    b = maxflops.count(_config(D, A, I, mode="prefill", max_target_length=sum(docs)), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * layer.macs
    assert b.attention == 0 and b.hardware_flops == b.total  # the WKV recurrence is elementwise
    train = maxflops.count(_config(D, A, I, mode="train", max_target_length=sum(docs)), segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs


def test_decode_is_one_step_and_reads_its_state():
    D, A, I = 8, 10, 12
    layer = NaiveRwkv(D, A, I)
    state = layer.forward(RNG.normal(size=(5, D)))
    layer.macs = 0
    layer.forward(RNG.normal(size=(1, D)), state)
    cfg = _config(D, A, I, mode="decode", per_device_batch_size=1, decode_kv_length=5, state_bytes=4)
    assert maxflops.count(cfg).total - 2 * D * 8 == 2 * layer.macs
    assert maxflops.decode_traffic(cfg).components["state"] == 2 * (2 * D + 3 * A) * 4


def test_a_time_mix_without_an_ffn_has_no_receptance_gate():
    b = maxflops.count(_config(8, 8, 12, ffn_layer_pattern="-", max_target_length=4))
    assert "rwkv_receptance" not in b.components


@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
def test_xla_counts_the_kernel_as_the_engine_prices_it(train):
    import jax
    import jax.numpy as jnp

    from maxflops.families.rwkv.proof import params, time_mix
    from maxflops.xla.hlo import count_lowered

    B, L, D, A = 2, 7, 8, 10
    prm = params(lambda name, shape: jnp.asarray(RNG.normal(size=shape) * 0.3, jnp.float32), D, A)
    x = jnp.asarray(RNG.normal(size=(B, L, D)), jnp.float32)
    fn = time_mix if not train else jax.grad(lambda p, x: jnp.sum(time_mix(p, x) ** 2), argnums=(0, 1))
    names = ["qkv_proj", "out_proj"]
    got = count_lowered(fn, prm, x).by_scope(names)
    b = maxflops.count(_config(D, A, 12, ffn_layer_pattern="-", mode="train" if train else "prefill",
                               max_target_length=L, per_device_batch_size=B))
    assert {n: got[n] for n in names} == {n: b.hardware_components[n] for n in names}


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_a_flax_model_of_rwkv_layers_equals_xla(mode, knobs):
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    base = maxflops.model_config(num_decoder_layers=2, attention_layer_pattern="W", emb_dim=64, mlp_dim=96,
                                 mlp_activations=("relu2",), vocab_size=500, rwkv_attention_dim=48)
    c, model, params, tokens = M.build(base, abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
