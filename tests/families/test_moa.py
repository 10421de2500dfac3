"""A mixture of attention heads (JetMoE's MoA, ``attention_router_experts``): a router D -> E before attention, each
token's top-k experts giving its query heads and projecting its output. Per token the experts a token uses are k of
them: the FLOPs are GQA of all its query heads plus the router, held here against a naive per-token layer (packed
documents and decode included); decode bytes read the experts the batch reaches; the Flax layer equals XLA;
transformers' eager JetMoE is held in the zoo."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveMoA:
    """JetMoeAttention one token at a time: the router, the top-k experts' q projections (Hkv heads each), one
    shared K/V projection, causal attention of every query head over its KV head, the experts' output projections.
    Counts the multiply-adds of every matmul."""

    def __init__(self, D, E, k, Hkv, d):
        self.D, self.E, self.k, self.Hkv, self.d, self.macs = D, E, k, Hkv, d, 0
        self.router = RNG.normal(size=(D, E))
        self.w_in = RNG.normal(size=(E, D, Hkv * d))
        self.w_out = RNG.normal(size=(E, Hkv * d, D))
        self.w_kv = RNG.normal(size=(D, 2 * Hkv * d))

    def matvec(self, x, w):
        self.macs += w.shape[0] * w.shape[1]
        return x @ w

    def forward(self, xs, cache=None):
        keys, values = cache if cache else ([], [])
        outs = []
        for x in xs:
            top = np.argsort(-self.matvec(x, self.router))[:self.k]
            kv = self.matvec(x, self.w_kv).reshape(2, self.Hkv, self.d)
            keys.append(kv[0])
            values.append(kv[1])
            K, V = np.array(keys), np.array(values)
            out = np.zeros(self.D)
            for e in top:
                q = self.matvec(x, self.w_in[e]).reshape(self.Hkv, self.d)
                o = np.zeros((self.Hkv, self.d))
                for h in range(self.Hkv):
                    s = K[:, h] @ q[h]
                    p = np.exp(s - s.max())
                    o[h] = (p / p.sum()) @ V[:, h]
                    self.macs += 2 * len(K) * self.d
                out += self.matvec(o.reshape(-1), self.w_out[e])
            outs.append(out)
        return np.array(outs), (keys, values)


def _config(D, E, k, Hkv, d, **kw):
    return maxflops.model_config(num_decoder_layers=1, attention_layer_pattern="G", ffn_layer_pattern="-",
                                 emb_dim=D, num_query_heads=Hkv * k, num_kv_heads=Hkv, head_dim=d, vocab_size=8,
                                 attention_router_experts=E, **kw)


@pytest.mark.parametrize("D,E,k,Hkv,d,docs", [(8, 4, 2, 2, 3, [6]), (6, 5, 1, 1, 4, [2, 7, 1]),
                                             (10, 3, 3, 2, 2, [4, 4])])
def test_model_flops_are_the_naive_layers_multiply_adds(D, E, k, Hkv, d, docs):
    layer = NaiveMoA(D, E, k, Hkv, d)
    for L in docs:
        layer.forward(RNG.normal(size=(L, D)))
    tokens = sum(docs)
    b = maxflops.count(_config(D, E, k, Hkv, d, mode="prefill", max_target_length=tokens), segment_lengths=docs)
    assert b.total - b.components["logits"] == 2 * layer.macs
    assert b.hardware_flops == b.total
    train = maxflops.count(_config(D, E, k, Hkv, d, mode="train", max_target_length=tokens), segment_lengths=docs)
    assert train.total - train.components["logits"] == 3 * 2 * layer.macs


@pytest.mark.parametrize("kvs", [[0, 3], [5]])
def test_decode_flops_and_the_experts_the_batch_reaches(kvs):
    D, E, k, Hkv, d = 8, 4, 2, 2, 3
    macs = 0
    for kv in kvs:
        layer = NaiveMoA(D, E, k, Hkv, d)
        _, cache = layer.forward(RNG.normal(size=(kv, D)))
        layer.macs = 0
        layer.forward(RNG.normal(size=(1, D)), cache)
        macs += layer.macs
    cfg = _config(D, E, k, Hkv, d, mode="decode", per_device_batch_size=len(kvs), weight_bytes=1)
    b = maxflops.count(cfg, segment_lengths=kvs)
    assert b.total - b.components["logits"] == 2 * macs
    reached = min(E, len(kvs) * k)  # each new token's top-k, distinct at most (the MoE rule)
    weights = D * E + reached * 2 * D * Hkv * d + D * 2 * Hkv * d + D * 8  # router, experts, K/V, head
    assert maxflops.decode_traffic(cfg, segment_lengths=kvs).components["weights"] == weights


@pytest.mark.parametrize("extra, match", [
    (dict(num_query_heads=10, num_kv_heads=2), r"'attention_router_experts'.*uses num_query_heads / num_kv_heads = 5 "
                                               r"of them"),
    (dict(attention_type="mla"), r"'attention_router_experts'.*modelled on GQA"),
    (dict(convention="megatron"), r"'convention': 'megatron' has no rule for a mixture of attention heads"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    base = dict(num_decoder_layers=1, emb_dim=12, num_query_heads=4, num_kv_heads=2, head_dim=3,
                attention_router_experts=4)
    with pytest.raises(ValueError, match=match):
        maxflops.model_config(**{**base, **extra})


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full"))],
                         ids=["prefill", "train", "remat"])
def test_a_flax_model_of_moa_layers_equals_xla(mode, knobs):
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    base = maxflops.model_config(num_decoder_layers=2, emb_dim=64, num_query_heads=8, num_kv_heads=4, head_dim=16,
                                 vocab_size=500, attention_router_experts=6, num_experts=6, num_experts_per_tok=2,
                                 moe_mlp_dim=32)
    c, model, params, tokens = M.build(base, abstract=True, mode=mode, **knobs)
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
    assert b.components["qkv_proj"] > maxflops.count(c, attention_router_experts=0).components["qkv_proj"]
