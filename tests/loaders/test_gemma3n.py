"""Gemma 3n (gemma3n_text, and its wrapper gemma3n): AltUp, LAuReL, per-layer embeddings, KV sharing and a per-layer
FFN width, read from Gemma3nTextConfig's keys.

The proof here is a naive model written from modeling_gemma3n's code (not from maxflops' terms): it runs one token
at a time through every layer with a cache per layer, each matmul through one helper that counts its multiply-adds;
its count equals maxflops' model FLOPs for prefill, packed documents, training and decode. (The zoo holds the loader
against torch's FlopCounterMode on transformers' eager model; tests/xla/test_xla_model.py holds the Flax layer
against XLA.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

import maxflops
from maxflops.loaders import load_hf_config

RNG = np.random.default_rng(0)


class Naive:
    """Gemma3nTextModel, token by token (numpy, random weights): the matmuls of its forward, each counted."""

    def __init__(self, D, V, H, KV, hd, widths, types, window, n, r, P, shared):
        self.D, self.V, self.H, self.KV, self.hd, self.n, self.r, self.P = D, V, H, KV, hd, n, r, P
        self.types, self.window, self.widths = types, window, widths
        L = len(types)
        first = L - shared
        self.reuse = {}  # a KV-shared layer -> the last earlier layer of its type
        for i in range(first, L):
            self.reuse[i] = max(j for j in range(first) if types[j] == types[i])
        self.macs = 0
        w = lambda *s: RNG.normal(size=s) * 0.1  # noqa: E731
        self.layers = [dict(router=w(D, n), pred=w(n, n * n), corr=w(n, n), q=w(D, H * hd), k=w(D, KV * hd),
                            v=w(D, KV * hd), o=w(H * hd, D), left=w(D, r), right=w(r, D), gate=w(D, widths[i]),
                            up=w(D, widths[i]), down=w(widths[i], D), ple_gate=w(D, P), ple_proj=w(P, D))
                       for i in range(L)]
        self.altup_in = [w(D, D) for _ in range(n - 1)]
        self.altup_out = [w(D, D) for _ in range(n - 1)]
        self.ple_model = w(D, L * P)
        self.head = w(D, V)

    def mm(self, a, b):
        self.macs += a.size // a.shape[-1] * b.size
        return a @ b

    def token(self, x, caches):
        """One token's embedding x [D] through the model; caches: per layer, its keys and values so far."""
        D, n, H, KV, hd = self.D, self.n, self.H, self.KV, self.hd
        ple = self.mm(x, self.ple_model).reshape(len(self.types), self.P)
        streams = np.stack([x] + [self.mm(x, w) for w in self.altup_in])  # [n, D]
        for i, p in enumerate(self.layers):
            coefs = self.mm(np.tanh(self.mm(streams[0], p["router"])), p["pred"]).reshape(n, n)
            pred = np.stack([sum(coefs[s, m] * streams[s] for s in range(n)) for m in range(n)]) + streams
            self.macs += n * n * D  # (the mix as torch.matmul runs it: [D, n] @ [n, n])
            active = pred[0]
            q = self.mm(active, p["q"]).reshape(H, hd)
            if i in self.reuse:
                keys, values = caches[self.reuse[i]]
            else:
                caches[i][0].append(self.mm(active, p["k"]).reshape(KV, hd))
                caches[i][1].append(self.mm(active, p["v"]).reshape(KV, hd))
                keys, values = caches[i]
            t = len(keys) - 1
            visible = [j for j in range(t + 1) if self.types[i] == "full_attention" or j > t - self.window]
            out = np.zeros((H, hd))
            for h in range(H):
                g = h // (H // KV)
                scores = np.array([self.mm(q[h], keys[j][g][:, None])[0] for j in visible])
                probs = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
                for pj, j in zip(probs, visible):
                    out[h] += self.mm(np.array([pj]), values[j][g][None, :])
            attn = self.mm(out.reshape(-1), p["o"])
            laurel = self.mm(self.mm(active, p["left"]), p["right"])
            h1 = active + attn + laurel
            ffn = self.mm(self.mm(h1, p["gate"]) * self.mm(h1, p["up"]), p["down"])
            h2 = h1 + ffn
            corr = self.mm(np.tanh(self.mm(h2, p["router"])), p["corr"]) + 1
            streams = pred + (h2 - active)[None, :] * corr[:, None]
            first = self.mm(self.mm(streams[0], p["ple_gate"]) * ple[i], p["ple_proj"])
            streams[1:] += first
        out = np.mean(np.stack([streams[0]] + [self.mm(streams[s], w) for s, w in enumerate(self.altup_out, 1)]), 0)
        return self.mm(out, self.head)

    def run(self, tokens, caches=None):
        caches = caches or [([], []) for _ in self.types]
        for _ in range(tokens):
            self.token(RNG.normal(size=self.D), caches)
        return caches


SHAPES = dict(D=16, V=30, H=4, KV=2, hd=6, widths=[20, 28, 20, 20], window=3, n=3, r=4, P=5, shared=2,
              types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"])


def _file(s):
    return {"model_type": "gemma3n_text", "hidden_size": s["D"], "vocab_size": s["V"], "num_attention_heads": s["H"],
            "num_key_value_heads": s["KV"], "head_dim": s["hd"], "intermediate_size": s["widths"],
            "num_hidden_layers": len(s["types"]), "layer_types": s["types"], "sliding_window": s["window"],
            "altup_num_inputs": s["n"], "laurel_rank": s["r"], "hidden_size_per_layer_input": s["P"],
            "num_kv_shared_layers": s["shared"], "vocab_size_per_layer_input": s["V"]}


def _load(tmp_path, data, **knobs):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return maxflops.model_config(**{**load_hf_config(path).overrides, **knobs})


@pytest.mark.parametrize("docs", [[7], [3, 9], [1, 1, 5]])
def test_prefill_and_training_are_the_naive_models(tmp_path, docs):
    naive = Naive(**SHAPES)
    for length in docs:
        naive.run(length)
    cfg = _load(tmp_path, _file(SHAPES), mode="prefill", per_device_batch_size=1, max_target_length=sum(docs))
    assert cfg["layer_widths"] == ("mlp_dim@1=28",)
    b = maxflops.count(cfg, segment_lengths=docs if len(docs) > 1 else None)
    assert b.total == 2 * naive.macs
    train = maxflops.count(cfg, mode="train", segment_lengths=docs if len(docs) > 1 else None)
    assert train.total == 3 * 2 * naive.macs  # every matmul takes both operands' gradients
    assert {"altup", "laurel", "altup_proj", "per_layer_emb", "per_layer_emb_proj"} <= set(b.components)


@pytest.mark.parametrize("kvs", [[0], [2, 5], [4, 4, 9]])
def test_decode_is_the_naive_models_next_token(tmp_path, kvs):
    macs = 0
    for kv in kvs:
        naive = Naive(**SHAPES)
        caches = naive.run(kv)
        naive.macs = 0
        naive.run(1, caches)
        macs += naive.macs
    cfg = _load(tmp_path, _file(SHAPES), mode="decode", per_device_batch_size=len(kvs))
    assert maxflops.count(cfg, segment_lengths=kvs).total == 2 * macs


def test_decode_reads_altups_router_once_and_every_projection(tmp_path):
    s = SHAPES
    cfg = _load(tmp_path, _file(s), mode="decode", per_device_batch_size=1, weight_bytes=1)
    base = _load(tmp_path, {**_file(s), "altup_num_inputs": 1}, mode="decode", per_device_batch_size=1,
                 weight_bytes=1)
    more = maxflops.decode_traffic(cfg).components["weights"] - maxflops.decode_traffic(base).components["weights"]
    n, D, layers = s["n"], s["D"], len(s["types"])
    # per layer: the router (D x n, used twice, read once) and the two coefficient matrices; outside: 2 (n - 1) D x D
    assert more == layers * ((D * n + n ** 3 + n * n) - (D + 1 + 1)) + 2 * (n - 1) * D * D


def test_what_the_class_derives_when_keys_are_absent(tmp_path):
    """Gemma3nTextConfig's defaults: every fifth layer global, altup 4 streams, LAuReL 64, PLE 256, the last 15 of 35
    layers KV-shared, one FFN width."""
    o = load_hf_config(_write(tmp_path, {"model_type": "gemma3n_text"})).overrides
    assert o["attention_layer_pattern"] == "LLLLG" and o["num_decoder_layers"] == 35
    assert (o["altup_num_inputs"], o["laurel_rank"], o["per_layer_input_dim"], o["num_kv_shared_layers"]) == \
        (4, 64, 256, 15)
    assert o["mlp_dim"] == 16384 and "layer_widths" not in o


def _write(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("change,key,says", [
    (dict(altup_active_idx=3), "altup_active_idx", "one of the altup_num_inputs=3 streams"),
    (dict(intermediate_size=[20, 28]), "intermediate_size", "one per layer"),
    (dict(activation_sparsity_pattern=[0.95]), "activation_sparsity_pattern", "one per layer"),
    (dict(num_kv_shared_layers=3), "num_kv_shared_layers", "no earlier layer computes"),
    (dict(num_kv_shared_layers=4), "num_kv_shared_layers", "leaves no layer"),
    (dict(altup_num_inputs=0), "altup_num_inputs", ""),
    (dict(laurel_rank=0), "laurel_rank", ""),
])
def test_bad_values_are_refused_by_name(tmp_path, change, key, says):
    with pytest.raises(ValueError) as e:
        load_hf_config(_write(tmp_path, {**_file(SHAPES), **change}))
    assert key in str(e.value) and says in str(e.value) and "\n" not in str(e.value)


def test_peers_and_other_residual_schemes_are_refused():
    with pytest.raises(ValueError, match="altup_num_inputs"):
        maxflops.model_config(altup_num_inputs=4, convention="maxtext")
    with pytest.raises(ValueError, match="laurel_rank"):
        maxflops.model_config(laurel_rank=8, convention="megatron_main")
    with pytest.raises(ValueError, match="two residual schemes"):
        maxflops.model_config(altup_num_inputs=4, mhc_expansion_rate=4)
    with pytest.raises(ValueError, match="mtp_num_layers"):
        maxflops.model_config(altup_num_inputs=4, mtp_num_layers=1)


def test_the_wrapper_reads_its_text_config(tmp_path):
    """Gemma3nConfig: the text model counted, the vision and audio towers named."""
    text = load_hf_config(_write(tmp_path, _file(SHAPES))).overrides
    wrapped = load_hf_config(_write(tmp_path, {"model_type": "gemma3n", "text_config": _file(SHAPES),
                                               "vision_config": {"model_type": "gemma3n_vision"},
                                               "audio_config": {"model_type": "gemma3n_audio"},
                                               "vision_soft_tokens_per_image": 256}))
    towers = wrapped.overrides.pop("not_priced")
    assert wrapped.overrides == text
    assert any("vision_config" in t for t in towers) and any("audio_config" in t for t in towers)
