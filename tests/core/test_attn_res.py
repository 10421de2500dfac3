"""Attention residuals (``attn_res_block_size``, Kimi K3's AttnRes): the engine against a naive model that runs
Megatron-Bridge's Kimi K3 layer loop (a running residual, a bank of snapshots taken every block of layers, each input
a softmax over the bank and the running residual) and counts the multiply-adds of every aggregate; decode bytes; the
refusals; the Flax model equal to XLA."""

from __future__ import annotations

import numpy as np
import pytest

import maxflops

RNG = np.random.default_rng(0)


class NaiveAttnRes:
    """The residual bookkeeping of KimiK3TransformerLayer.forward, token by token, with a stand-in mixer and FFN (a
    fixed random map each: their FLOPs are the model's others). Counts the aggregates' multiply-adds: per row a
    D -> 1 score, then the weighted sum over the rows."""

    def __init__(self, D, n, block):
        self.D, self.n, self.block, self.macs = D, n, block, 0
        self.w = [(RNG.normal(size=D), RNG.normal(size=D)) for _ in range(n)]
        self.w_out = RNG.normal(size=D)
        self.mix = [RNG.normal(size=(D, D)) * 0.1 for _ in range(2 * n)]

    def aggregate(self, prefix, bank, w):
        rows = bank + [prefix]
        normed = [r / np.sqrt((r * r).mean() + 1e-5) for r in rows]
        scores = np.array([sum(a * b for a, b in zip(x, w)) for x in normed])
        self.macs += len(rows) * self.D
        p = np.exp(scores - scores.max())
        p /= p.sum()
        self.macs += len(rows) * self.D
        return sum(pi * r for pi, r in zip(p, rows))

    def token(self, x):
        prefix, bank = x, []
        for layer in range(self.n):
            h = self.aggregate(prefix, bank, self.w[layer][0]) if bank else prefix
            write = layer % self.block == 0
            if write:
                bank = bank + [prefix]
            out = np.tanh(h @ self.mix[2 * layer])
            prefix = out if write else prefix + out
            h = self.aggregate(prefix, bank, self.w[layer][1])
            prefix = prefix + np.tanh(h @ self.mix[2 * layer + 1])
        return self.aggregate(prefix, bank, self.w_out)


def _config(D, n, block, **kw):
    return maxflops.model_config(num_decoder_layers=n, emb_dim=D, num_query_heads=2, num_kv_heads=2, head_dim=3,
                                 mlp_dim=5, vocab_size=8, attn_res_block_size=block, **kw)


@pytest.mark.parametrize("D,n,block,tokens", [(6, 5, 2, 3), (4, 7, 3, 2), (5, 4, 1, 1), (3, 3, 12, 4)])
def test_the_aggregates_are_the_naive_models_multiply_adds(D, n, block, tokens):
    naive = NaiveAttnRes(D, n, block)
    for _ in range(tokens):
        naive.token(RNG.normal(size=D))
    for mode, factor in (("prefill", 1), ("train", 3)):
        b = maxflops.count(_config(D, n, block, mode=mode, max_target_length=tokens))
        assert b.components["attn_res"] == factor * 2 * naive.macs
        plain = maxflops.count(_config(D, n, 0, mode=mode, max_target_length=tokens))
        assert b.total - plain.total == b.components["attn_res"]  # nothing else moves
        assert b.hardware_flops == b.total
        elementwise = maxflops.count(_config(D, n, block, mode=mode, max_target_length=tokens,
                                             weighted_sum_impl="elementwise"))
        assert "attn_res" not in elementwise.hardware_components  # a multiply and a sum: no matmul


def test_decode_is_one_token_of_it_and_reads_the_score_vectors():
    D, n, block = 6, 5, 2
    naive = NaiveAttnRes(D, n, block)
    naive.token(RNG.normal(size=D))
    cfg = _config(D, n, block, mode="decode", per_device_batch_size=3, decode_kv_length=7)
    assert maxflops.count(cfg).components["attn_res"] == 3 * 2 * naive.macs
    extra = maxflops.decode_traffic(cfg).components["weights"] - maxflops.decode_traffic(
        _config(D, n, 0, mode="decode", per_device_batch_size=3, decode_kv_length=7)).components["weights"]
    assert extra == 2 * (2 * n - 1 + 1) * D  # layer 0's mixer input aggregates nothing; bf16 weights


@pytest.mark.parametrize("extra, match", [
    (dict(mtp_num_layers=1), r"'mtp_num_layers'"),
    (dict(mhc_expansion_rate=2), r"'mhc_expansion_rate'"),
    (dict(ffn_layer_pattern="F-", num_decoder_layers=2, attention_layer_pattern="GG"), r"'attn_res_block_size'"),
    (dict(convention="megatron"), r"'convention': 'megatron' has no rule for attention residuals.*'megatron_bridge'"),
])
def test_forms_it_is_not_modelled_with_are_refused(extra, match):
    base = dict(num_decoder_layers=3, emb_dim=8, num_query_heads=2, num_kv_heads=2, head_dim=4, mlp_dim=6,
                attn_res_block_size=2)
    with pytest.raises(ValueError, match=match):
        maxflops.model_config(**{**base, **extra})


@pytest.mark.slow
@pytest.mark.parametrize("mode,knobs", [("prefill", {}), ("train", {}), ("train", dict(remat_policy="full")),
                                        ("train", dict(weighted_sum_impl="elementwise"))],
                         ids=["prefill", "train", "remat", "elementwise"])
def test_a_flax_model_with_attention_residuals_equals_xla(mode, knobs):
    from maxflops.xla import model as M
    from maxflops.xla.hlo import count_lowered

    base = maxflops.model_config(num_decoder_layers=7, attention_layer_pattern="GGGK", emb_dim=64, num_query_heads=4,
                                 num_kv_heads=2, head_dim=16, mlp_dim=96, vocab_size=500, attn_res_block_size=3,
                                 kda_num_heads=2, kda_head_dim=8)
    c, model, params, tokens = M.build(base, abstract=True, mode=mode, **knobs)
    assert c["attn_res_block_size"] == 2 and c["num_decoder_layers"] >= 4
    b = maxflops.count(c)
    fn, args = M.step_program(model, params, tokens, mode, abstract=True)
    assert b.hardware_flops == count_lowered(fn, *args).matmul_flops
