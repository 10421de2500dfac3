"""Doge (doge): dynamic-mask attention (dynamic_mask_keys) and the CDMoE (moe_router_product_keys,
moe_experts_ungated), read from DogeConfig's keys.

The proof here is a naive model written from modeling_doge's code (not from maxflops' terms): one token at a time
through every layer, each matmul through one helper that counts its multiply-adds; each query attends the keys its
dynamic mask keeps (the top keep_window_size of its visible keys by their scores), each token's CDMoE retrieves its
experts by product keys. Its count equals maxflops' model FLOPs for prefill, packed documents, training and decode,
dense and MoE. (The zoo holds the loader against torch's FlopCounterMode on transformers' eager model;
tests/xla/test_xla_model.py holds the Flax layer against XLA.)"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import maxflops
from maxflops.loaders import load_hf_config

RNG = np.random.default_rng(0)


class Naive:
    """DogeForCausalLM, token by token (numpy, random weights)."""

    def __init__(self, D, V, H, KV, F, W, E, k, layers, moe, window=None):
        self.D, self.H, self.KV, self.hd, self.W, self.E, self.k, self.moe = D, H, KV, D // H, W, E, k, moe
        self.window, self.macs = window, 0
        hd, w = self.hd, (lambda *s: RNG.normal(size=s) * 0.3)  # noqa: E731
        self.n = math.isqrt(E)
        self.layers = [dict(q=w(D, H * hd), k=w(D, KV * hd), v=w(D, KV * hd), dt=w(KV * hd, KV), o=w(H * hd, D),
                            gate=w(D, F), up=w(D, F), down=w(F, D), router=w(D, 2 * self.n), down_embed=w(E, D),
                            up_embed=w(E, D)) for _ in range(layers)]
        self.head = w(D, V)

    def mm(self, a, b):
        self.macs += a.size // a.shape[-1] * b.size
        return a @ b

    def layer(self, p, x, st):
        H, KV, hd = self.H, self.KV, self.hd
        q = self.mm(x, p["q"]).reshape(H, hd)
        st["k"].append(self.mm(x, p["k"]).reshape(KV, hd))
        v = self.mm(x, p["v"])
        st["v"].append(v.reshape(KV, hd))
        st["dt"].append(np.exp(-np.logaddexp(0, self.mm(v, p["dt"]))))  # the key's score per KV head
        t = len(st["k"]) - 1
        visible = [j for j in range(t + 1) if self.window is None or j > t - self.window]
        out = np.zeros((H, hd))
        for h in range(H):
            g = h // (H // KV)
            kept = sorted(visible, key=lambda j: -st["dt"][j][g])[:self.W]  # the dynamic mask's keys
            s = np.array([self.mm(q[h], st["k"][j][g][:, None])[0] for j in kept])
            prob = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
            for pj, j in zip(prob, kept):
                out[h] += self.mm(np.array([pj]), st["v"][j][g][None, :])
        x = x + self.mm(out.reshape(-1), p["o"])
        y = self.mm(self.mm(x, p["gate"]) * self.mm(x, p["up"]), p["down"])
        if self.moe:  # product keys: the top n of each half, every pair scored by its sum, the top k pairs
            half = self.mm(x, p["router"])
            sx, sy = half[:self.n], half[self.n:]
            pairs = sorted(((sx[a] + sy[b], a * self.n + b) for a in range(self.n) for b in range(self.n)),
                           reverse=True)[:self.k]
            for score, e in pairs:
                act = self.mm(p["down_embed"][e], x[:, None])[0]
                y = y + self.mm(np.array([np.tanh(act) * score]), p["up_embed"][e][None, :])
        return x + y

    def run(self, tokens, states=None):
        states = states or [dict(k=[], v=[], dt=[]) for _ in self.layers]
        for _ in range(tokens):
            x = RNG.normal(size=self.D)
            for p, st in zip(self.layers, states):
                x = self.layer(p, x, st)
            self.mm(x, self.head)
        return states


SHAPES = dict(D=12, V=20, H=4, KV=2, F=10, W=5, E=9, k=3, layers=2)


def _file(s, moe, window=None):
    return {"model_type": "doge", "hidden_size": s["D"], "vocab_size": s["V"], "num_attention_heads": s["H"],
            "num_key_value_heads": s["KV"], "intermediate_size": s["F"], "keep_window_size": s["W"],
            "num_experts": s["E"], "num_experts_per_tok": s["k"], "num_hidden_layers": s["layers"], "is_moe": moe,
            "sliding_window": window}


def _write(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def _config(tmp_path, moe, window=None, **knobs):
    return maxflops.model_config(**load_hf_config(_write(tmp_path, _file(SHAPES, moe, window))).overrides, **knobs)


@pytest.mark.parametrize("moe", [False, True])
@pytest.mark.parametrize("docs,window", [([11], None), ([3, 9], None), ([2, 12, 7], 4), ([12], 8)])
def test_prefill_and_training_are_the_naive_models(tmp_path, docs, window, moe):
    naive = Naive(**SHAPES, moe=moe, window=window)
    for length in docs:
        naive.run(length)
    cfg = _config(tmp_path, moe, window, mode="prefill", per_device_batch_size=1, max_target_length=sum(docs))
    packed = docs if len(docs) > 1 else None
    b = maxflops.count(cfg, segment_lengths=packed)
    assert b.total == 2 * naive.macs
    assert maxflops.count(cfg, mode="train", segment_lengths=packed).total == 3 * 2 * naive.macs


@pytest.mark.parametrize("kvs", [[0], [4, 9], [2, 5, 13]])
def test_decode_is_the_naive_models_next_token(tmp_path, kvs):
    macs = 0
    for kv in kvs:
        naive = Naive(**SHAPES, moe=True)
        states = naive.run(kv)
        naive.macs = 0
        naive.run(1, states)
        macs += naive.macs
    cfg = _config(tmp_path, True, mode="decode", per_device_batch_size=len(kvs))
    assert maxflops.count(cfg, segment_lengths=kvs).total == 2 * macs


def test_decode_reads_the_kept_keys_and_every_score(tmp_path):
    s, kvs = SHAPES, [3, 10]
    cfg = _config(tmp_path, True, mode="decode", per_device_batch_size=2, kv_cache_bytes=2, index_cache_bytes=4,
                  weight_bytes=1)
    t = maxflops.decode_traffic(cfg, segment_lengths=kvs).components
    hd = s["D"] // s["H"]
    assert t["kv_read"] == s["layers"] * sum(min(kv + 1, s["W"]) for kv in kvs) * 2 * s["KV"] * hd * 2
    assert t["index_read"] == s["layers"] * sum(kv + 1 for kv in kvs) * s["KV"] * 4
    assert t["index_write"] == s["layers"] * 2 * s["KV"] * 4
    # the experts' weights: each a down and an up vector of D, the experts two tokens' top 3 reach (at most 6)
    dense = _config(tmp_path, False, mode="decode", per_device_batch_size=2, weight_bytes=1)
    more = t["weights"] - maxflops.decode_traffic(dense, segment_lengths=kvs).components["weights"]
    assert more == s["layers"] * (s["D"] * 2 * math.isqrt(s["E"]) + 6 * 2 * s["D"])


def test_what_the_class_derives_when_keys_are_absent(tmp_path):
    o = load_hf_config(_write(tmp_path, {"model_type": "doge"})).overrides
    assert (o["dynamic_mask_keys"], o["num_query_heads"], o["num_kv_heads"], o["head_dim"], o["mlp_dim"]) == \
        (2048, 8, 8, 128, 2048)
    assert o["attention_layer_pattern"] == "G" and "num_experts" not in o
    moe = load_hf_config(_write(tmp_path, {"model_type": "doge", "is_moe": True})).overrides
    assert (moe["num_experts"], moe["num_experts_per_tok"], moe["moe_mlp_dim"], moe["shared_expert_mlp_dim"]) == \
        (16384, 64, 1, 2048)


def test_refusals_name_the_key():
    with pytest.raises(ValueError, match="dynamic_mask_keys"):
        maxflops.model_config(dynamic_mask_keys=8, causal=False)
    with pytest.raises(ValueError, match="dynamic_mask_keys"):
        maxflops.model_config(dynamic_mask_keys=8, convention="maxtext")
    with pytest.raises(ValueError, match="num_experts_per_tok"):
        maxflops.model_config(num_experts=10, num_experts_per_tok=10, moe_router_product_keys=True)
    with pytest.raises(ValueError, match="zero_experts"):
        maxflops.model_config(num_experts=9, num_experts_per_tok=2, moe_router_product_keys=True, zero_experts=1)
