"""ZAYA (zaya): compressed convolutional attention (CCA), the MLP router and the skip expert, read from ZayaConfig's
keys.

The proof here is a naive model written from modeling_zaya's code (not from maxflops' terms): one token at a time
through every layer, each matmul and each conv tap through one helper that counts its multiply-adds, the convs over
the real tokens only (their outputs kept, so a token computes its own); its count equals maxflops' model FLOPs for
prefill, packed documents, training and decode, with the share of tokens its router sent to the skip expert given as
zero_expert_share. (The zoo holds the loader against torch's FlopCounterMode on transformers' eager model;
tests/xla/test_xla_model.py holds the Flax layer against XLA.)"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

import maxflops
from maxflops.loaders import load_hf_config

RNG = np.random.default_rng(0)


class Naive:
    """ZayaForCausalLM, token by token (numpy, random weights)."""

    def __init__(self, D, V, H, KV, hd, F, E, R, t0, t1, types, window, skip_bias):
        self.D, self.H, self.KV, self.hd, self.E, self.t0, self.t1 = D, H, KV, hd, E, t0, t1
        self.types, self.window, self.skip_bias = types, window, skip_bias
        self.macs, self.skipped, self.tokens = 0, 0, 0
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        C = (H + KV) * hd
        self.layers = [dict(q=w(D, H * hd), k=w(D, KV * hd), v_cur=w(D, KV * hd // 2), v_del=w(D, KV * hd // 2),
                            dw=w(t0, C), grouped=w(t1, H + KV, hd, hd), o=w(H * hd, D), down=w(D, R), fc1=w(R, R),
                            fc2=w(R, R), out=w(R, E + 1), gate=w(E, D, F), up=w(E, D, F), e_down=w(E, F, D))
                       for _ in types]
        self.head = w(D, V)

    def mm(self, a, b):
        self.macs += a.size // a.shape[-1] * b.size
        return a @ b

    def layer(self, i, x, st):
        p, H, KV, hd = self.layers[i], self.H, self.KV, self.hd
        q, k = self.mm(x, p["q"]), self.mm(x, p["k"])
        st["qk"].append(np.concatenate([q, k]))  # the depthwise conv's inputs so far
        t = len(st["qk"]) - 1
        dw = sum(p["dw"][j] * st["qk"][t - j] for j in range(min(self.t0, t + 1)))
        self.macs += dw.size * min(self.t0, t + 1)
        st["dw"].append(dw.reshape(H + KV, hd))
        grouped = np.zeros((H + KV, hd))
        for j in range(min(self.t1, t + 1)):  # each head: head width in, head width out, per tap
            for g in range(H + KV):
                grouped[g] += self.mm(st["dw"][t - j][g], p["grouped"][j, g])
        qh = q.reshape(H, hd) + grouped[:H]
        kh = k.reshape(KV, hd) + grouped[H:]
        v_delayed = st["v_prev"]
        st["v_prev"] = self.mm(x, p["v_del"])
        v = np.concatenate([self.mm(x, p["v_cur"]).reshape(KV, hd // 2), v_delayed.reshape(KV, hd // 2)], -1)
        st["k"].append(kh)
        st["v"].append(v)
        visible = [j for j in range(t + 1) if self.types[i] == "hybrid" or j > t - self.window]
        out = np.zeros((H, hd))
        for h in range(H):
            g = h // (H // KV)
            s = np.array([self.mm(qh[h], st["k"][j][g][:, None])[0] for j in visible])
            prob = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
            for pj, j in zip(prob, visible):
                out[h] += self.mm(np.array([pj]), st["v"][j][g][None, :])
        x = x + self.mm(out.reshape(-1), p["o"])
        r = self.mm(x, p["down"])
        r = self.mm(np.tanh(self.mm(np.tanh(self.mm(r, p["fc1"])), p["fc2"])), p["out"])
        probs = np.exp(r - r.max()) / np.exp(r - r.max()).sum()
        e = int(np.argmax(probs + np.r_[np.zeros(self.E), self.skip_bias]))
        self.tokens += 1
        if e == self.E:  # the skip expert: no compute
            self.skipped += 1
            return x
        hidden = self.mm(x, p["gate"][e]) * self.mm(x, p["up"][e])
        return x + probs[e] * self.mm(hidden, p["e_down"][e])

    def run(self, tokens, states=None):
        states = states or [dict(qk=[], dw=[], k=[], v=[], v_prev=np.zeros(self.KV * self.hd // 2))
                            for _ in self.types]
        for _ in range(tokens):
            x = RNG.normal(size=self.D)
            for i in range(len(self.types)):
                x = self.layer(i, x, states[i])
            self.mm(x, self.head)
        return states


SHAPES = dict(D=12, V=20, H=4, KV=2, hd=6, F=10, E=3, R=5, t0=2, t1=3, types=["hybrid", "hybrid_sliding", "hybrid"],
              window=4)


def _file(s):
    return {"model_type": "zaya", "hidden_size": s["D"], "vocab_size": s["V"], "num_attention_heads": s["H"],
            "num_key_value_heads": s["KV"], "head_dim": s["hd"], "moe_intermediate_size": s["F"],
            "num_experts": s["E"], "router_hidden_size": s["R"], "cca_time0": s["t0"], "cca_time1": s["t1"],
            "num_hidden_layers": len(s["types"]), "layer_types": s["types"], "sliding_window": s["window"]}


def _write(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def _config(tmp_path, naive, **knobs):
    share = Fraction(naive.skipped, naive.tokens)
    return maxflops.model_config(**load_hf_config(_write(tmp_path, _file(SHAPES))).overrides,
                                 zero_expert_share=float(share), **knobs)


@pytest.mark.parametrize("docs,skip_bias", [([9], -1.0), ([4, 7], 0.3), ([1, 2, 6], 0.6)])
def test_prefill_and_training_are_the_naive_models(tmp_path, docs, skip_bias):
    naive = Naive(**SHAPES, skip_bias=skip_bias)
    for length in docs:
        naive.run(length)
    assert (naive.skipped == 0) == (skip_bias < 0)  # (the class's bias of -1: a fresh model never skips)
    cfg = _config(tmp_path, naive, mode="prefill", per_device_batch_size=1, max_target_length=sum(docs))
    packed = docs if len(docs) > 1 else None
    b = maxflops.count(cfg, segment_lengths=packed)
    assert b.total == 2 * naive.macs
    assert maxflops.count(cfg, mode="train", segment_lengths=packed).total == 3 * 2 * naive.macs
    assert {"cca_conv", "moe_router", "moe_routed"} <= set(b.components)


@pytest.mark.parametrize("kvs", [[0], [1, 5], [3, 3, 8]])
def test_decode_is_the_naive_models_next_token(tmp_path, kvs):
    macs, skipped = 0, 0
    for kv in kvs:
        naive = Naive(**SHAPES, skip_bias=-1.0)
        states = naive.run(kv)
        naive.macs = 0
        naive.run(1, states)
        macs += naive.macs
    cfg = maxflops.model_config(**load_hf_config(_write(tmp_path, _file(SHAPES))).overrides, zero_expert_share=0.0,
                                mode="decode", per_device_batch_size=len(kvs))
    assert maxflops.count(cfg, segment_lengths=kvs).total == 2 * macs


def test_decode_state_and_transformers_padded_convs(tmp_path):
    """The state a decode step reads and writes per layer and sequence: the conv inputs kept (t0 - 1 + t1 - 1 of
    (H + KV) hd channels) and the delayed value half (KV hd / 2). 'padded' (transformers): the depthwise conv over
    L + t1 - 1 outputs, the grouped one over L, every tap; in decode the depthwise conv at the t1 positions the
    grouped one reads."""
    s = SHAPES
    o = load_hf_config(_write(tmp_path, _file(s))).overrides
    C, layers = (s["H"] + s["KV"]) * s["hd"], len(s["types"])
    cfg = maxflops.model_config(**o, mode="decode", per_device_batch_size=2, state_bytes=2)
    kept = (s["t0"] - 1 + s["t1"] - 1) * C + s["KV"] * s["hd"] // 2
    assert maxflops.decode_traffic(cfg).components["state"] == layers * 2 * kept * 2 * 2
    L = 11
    pre = maxflops.model_config(**o, mode="prefill", max_target_length=L, per_device_batch_size=1,
                                aux_conv_impl="padded")
    want = layers * (2 * C * s["t0"] * (L + s["t1"] - 1) + 2 * C * s["hd"] * s["t1"] * L)
    assert maxflops.count(pre).hardware_components["cca_conv"] == want
    dec = maxflops.model_config(**o, mode="decode", per_device_batch_size=1, aux_conv_impl="padded")
    assert maxflops.count(dec).hardware_components["cca_conv"] == \
        layers * (2 * C * s["t0"] * s["t1"] + 2 * C * s["hd"] * s["t1"])


def test_what_the_class_derives_when_keys_are_absent(tmp_path):
    o = load_hf_config(_write(tmp_path, {"model_type": "zaya"})).overrides
    assert o["attention_layer_pattern"] == "G" and o["num_decoder_layers"] == 40
    assert (o["cca_depthwise_kernel"], o["cca_grouped_kernel"], o["moe_router_mlp_dim"], o["num_experts"],
            o["num_experts_per_tok"], o["zero_experts"], o["head_dim"]) == (2, 2, 256, 16, 1, 1, 128)


@pytest.mark.parametrize("change,key,says", [
    (dict(num_experts_per_tok=2), "num_experts_per_tok", "top-1"),
    (dict(head_dim=7), "head_dim", "even"),
    (dict(cca_time0=0), "cca_time0", ""),
    (dict(layer_types=["hybrid", "full_attention", "hybrid"]), "layer_types", "not supported"),
])
def test_bad_values_are_refused_by_name(tmp_path, change, key, says):
    with pytest.raises(ValueError) as e:
        load_hf_config(_write(tmp_path, {**_file(SHAPES), **change}))
    assert key in str(e.value) and says in str(e.value) and "\n" not in str(e.value)


def test_cca_is_refused_where_it_is_not_modelled():
    with pytest.raises(ValueError, match="cca_grouped_kernel"):
        maxflops.model_config(cca_depthwise_kernel=2)
    with pytest.raises(ValueError, match="attention_type"):
        maxflops.model_config(cca_depthwise_kernel=2, cca_grouped_kernel=2, attention_type="mla")
    with pytest.raises(ValueError, match="aux_conv_impl"):
        maxflops.model_config(cca_depthwise_kernel=2, cca_grouped_kernel=2, aux_conv_impl="pre_padded")
    with pytest.raises(ValueError, match="cca_depthwise_kernel"):
        maxflops.model_config(cca_depthwise_kernel=2, cca_grouped_kernel=2, convention="maxtext")
    with pytest.raises(ValueError, match="moe_router_mlp_dim"):
        maxflops.model_config(moe_router_mlp_dim=8, num_experts=4, num_experts_per_tok=1, convention="megatron_main")
