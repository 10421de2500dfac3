"""Differential attention (DiffLlama, ``attention_differential``): the engine's model FLOPs against a naive per-token
layer that counts its own multiply-adds (windows, packed documents and decode included); the Flax layer against
XLA in both forms (``differential_impl``); refusals. transformers' eager DiffLlama (two calls) is held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops
from repo import quietly_inert

RNG = np.random.default_rng(0)


class NaiveDifferential:
    """DiffLlama's attention, one query at a time over one document: q, k, v projections, each head's map over its
    visible keys weighing the two value halves side by side (2 d wide), heads i and i + H/2 subtracted, the output
    projection. Counts the multiply-adds of every product of a weight or an activation."""

    def __init__(self, D, H, Hkv, d, window=0):
        self.D, self.H, self.Hkv, self.d, self.window, self.macs = D, H, Hkv, d, window, 0
        self.wq, self.wk, self.wv = (RNG.normal(size=(D, n * d)) for n in (H, Hkv, Hkv))
        self.wo = RNG.normal(size=(H * d, D))

    def matvec(self, x, w):
        self.macs += w.shape[0] * w.shape[1]
        return x @ w

    def forward(self, xs, cache=None):
        H, Hkv, d = self.H, self.Hkv, self.d
        keys, values = cache if cache else ([], [])
        outs = []
        for x in xs:
            q = self.matvec(x, self.wq).reshape(H, d)
            keys.append(self.matvec(x, self.wk).reshape(Hkv, d))
            values.append(self.matvec(x, self.wv).reshape(Hkv, d))
            lo = max(0, len(keys) - self.window) if self.window else 0
            K, V = np.array(keys[lo:]), np.array(values[lo:])  # [S, Hkv, d]
            halves = [np.concatenate([V[:, :Hkv // 2]] * 2, 1), np.concatenate([V[:, Hkv // 2:]] * 2, 1)]
            wide = np.concatenate(halves, -1)  # [S, Hkv, 2d]: both halves side by side
            o = np.zeros((H, 2 * d))
            for h in range(H):
                g = h // (H // Hkv)
                s = K[:, g] @ q[h]
                self.macs += len(K) * d
                p = np.exp(s - s.max())
                o[h] = (p / p.sum()) @ wide[:, g]
                self.macs += len(K) * 2 * d
            diff = o[:H // 2] - 0.8 * o[H // 2:]  # elementwise
            outs.append(self.matvec(diff.reshape(-1), self.wo))
        return np.array(outs), (keys, values)


def _config(D, H, Hkv, d, pattern="G", window=0, **kw):
    return quietly_inert(lambda: maxflops.model_config(
        num_decoder_layers=1, attention_layer_pattern=pattern, ffn_layer_pattern="-", emb_dim=D, num_query_heads=H,
        num_kv_heads=Hkv, head_dim=d, vocab_size=8, sliding_window_size=window, attention_differential=True, **kw))


CASES = [(12, 4, 2, 3, "G", 0, [7]), (10, 8, 4, 2, "G", 0, [1, 5, 2, 9]), (12, 4, 2, 3, "L", 3, [6, 4])]


@pytest.mark.parametrize("D,H,Hkv,d,pattern,window,docs", CASES)
def test_model_flops_are_the_naive_layers_multiply_adds(D, H, Hkv, d, pattern, window, docs):
    layer = NaiveDifferential(D, H, Hkv, d, window)
    for L in docs:
        layer.forward(RNG.normal(size=(L, D)))
    tokens = sum(docs)
    b = maxflops.count(_config(D, H, Hkv, d, pattern, window, mode="prefill", max_target_length=tokens),
                       segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * layer.macs
    assert b.hardware_flops == b.total  # one call over both halves (the default)
    train = maxflops.count(_config(D, H, Hkv, d, pattern, window, mode="train", max_target_length=tokens),
                           segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs
    plain = maxflops.count(_config(D, H, Hkv, d, pattern, window, mode="prefill", max_target_length=tokens),
                           segment_lengths=docs, attention_differential=False)
    assert b.components["core_attention"] * 2 == plain.components["core_attention"] * 3  # PV twice as wide


@pytest.mark.parametrize("kvs", [[0, 4], [9]])
def test_decode_is_the_naive_layers_new_token(kvs):
    D, H, Hkv, d = 12, 4, 2, 3
    macs = 0
    for kv in kvs:
        layer = NaiveDifferential(D, H, Hkv, d)
        _, cache = layer.forward(RNG.normal(size=(kv, D)))
        layer.macs = 0
        layer.forward(RNG.normal(size=(1, D)), cache)
        macs += layer.macs
    b = maxflops.count(_config(D, H, Hkv, d, mode="decode", per_device_batch_size=len(kvs)), segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    # the cache holds plain keys and values (d each per KV head)
    cfg = _config(D, H, Hkv, d, mode="decode", per_device_batch_size=len(kvs))
    assert maxflops.decode_traffic(cfg, segment_lengths=kvs).components["kv_read"] == maxflops.decode_traffic(
        cfg, segment_lengths=kvs, attention_differential=False).components["kv_read"]


def test_two_calls_compute_qk_twice():
    c = dict(D=12, H=4, Hkv=2, d=3)
    one = maxflops.count(_config(*c.values(), mode="prefill", max_target_length=9))
    two = maxflops.count(_config(*c.values(), mode="prefill", max_target_length=9, differential_impl="two_calls"))
    pairs = 9 * 10 // 2
    assert two.hardware_components["core_attention"] - one.hardware_components["core_attention"] == 2 * 4 * 3 * pairs
    assert two.total == one.total  # model FLOPs: one map per head


@pytest.mark.parametrize("extra, match", [
    (dict(num_kv_heads=1, num_query_heads=4), r"'num_kv_heads'.*both must be even"),
    (dict(attention_type="mla"), r"'attention_type'.*differential attention is modelled on plain GQA"),
    (dict(value_head_dim=2), r"'value_head_dim'"),
    (dict(convention="maxtext"), r"'convention': 'maxtext' has no rule for differential attention"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    base = dict(num_decoder_layers=1, emb_dim=12, num_query_heads=4, num_kv_heads=2, head_dim=3,
                attention_differential=True)
    with pytest.raises(ValueError, match=match):
        maxflops.model_config(**{**base, **extra})


def test_the_impl_knob_without_differential_layers_is_said():
    with pytest.warns(maxflops.InertKeyWarning, match="'differential_impl' = 'two_calls' changes nothing here"):
        maxflops.model_config(differential_impl="two_calls")


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["doubled_values", "two_calls"])
@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}),
                                        ("train", dict(remat_policy="full", flash_backward_recompute=True)),
                                        ("train", dict(attention_impl="blocked"))],
                         ids=["prefill", "train", "remat", "blocked"])
def test_a_flax_model_of_differential_layers_equals_xla(impl, mode, knobs):
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    base = maxflops.model_config(num_decoder_layers=3, emb_dim=64, mlp_dim=96, num_query_heads=8, num_kv_heads=4,
                                 head_dim=16, vocab_size=500, attention_layer_pattern="GLG", sliding_window_size=9,
                                 attention_differential=True)
    c, model, params, tokens = M.build(base, abstract=True, mode=mode, differential_impl=impl, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
