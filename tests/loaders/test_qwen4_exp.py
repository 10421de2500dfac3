"""Qwen4-Exp (``qwen4_exp_text``): its trunk against a naive model written from transformers' modeling_qwen4_exp,
run token by token on each document: the gated hyper-connections around each branch and before the head
(Qwen4ExpTextGatedResidual) and the per-layer n-gram embeddings (Qwen4ExpTextPLELayer: a key per stream and a value
from the n-gram embedding, the gate's dot products, the dilated conv over the streams), with stand-in branches (a
fixed map each: their FLOPs are the families' own, proved in tests/families); the count read from a Qwen4-Exp file
equals its multiply-adds by component (packed, training, decode). QSA is proved in tests/families/test_qsa.py,
the whole model against torch in the zoo, the hyper-connections' Flax layer against XLA in tests/xla."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import maxflops
from maxflops.loaders import load_hf_config

RNG = np.random.default_rng(11)

# a tiny Qwen4-Exp: PLE on layers 1 and 2 (1-based), four streams, n-grams up to 3 with 2 heads each
FILE = {"model_type": "qwen4_exp_text", "hidden_size": 12, "num_hidden_layers": 4, "num_attention_heads": 2,
        "num_key_value_heads": 1, "head_dim": 6, "layer_types": ["linear_attention"] * 3 + ["indexed_attention"],
        "linear_num_key_heads": 2, "linear_num_value_heads": 2, "linear_key_head_dim": 4, "linear_value_head_dim": 4,
        "linear_conv_kernel_dim": 3, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 6,
        "shared_expert_intermediate_size": 5, "hc_count": 4, "hc_lowrank": 3, "ple_layer_ids": [1, 2],
        "ple_embed_dim": 8, "ple_conv_kernel_size": 3, "ngram_size": 3, "heads_per_ngram": 2, "eos_token_id": 1,
        "indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": 4, "indexer_budget": 4,
        "indexer_compress_ratio": 2, "vocab_size": 30}
TRUNK = ("mhc", "mhc_head", "engram_proj", "engram_gate", "engram_conv")


def _rms(x):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)


class NaiveTrunk:
    """Qwen4ExpTextModel's residual streams for one token at a time: before each layer with PLE, the n-gram
    embedding (a lookup) projected to a key per stream (P -> G*D) and a value (P -> D), each stream's gate the dot
    product of its normed key and its normed stream, the gated values through a causal depthwise conv over the G*D
    channels of K taps spaced n apart (n the n-gram size; its earlier inputs the document's own); around each branch
    Qwen4ExpTextGatedResidual (the normed streams through G*D -> r -> G*D, per-channel weights, their weighted mean
    the branch input; G*D -> G weights spreading the branch output over the streams); before the head its mixer
    without the spread. ``macs`` counts the multiply-adds by component."""

    def __init__(self, f):
        self.f, self.macs = f, Counter()
        G, D, r, P = f["hc_count"], f["hidden_size"], f["hc_lowrank"], f["ple_embed_dim"]
        n = f["num_hidden_layers"]
        w = lambda *s: RNG.normal(size=s) * 0.3  # noqa: E731
        self.gr = [[{"down": w(G * D, r), "up": w(r, G * D), "inject": w(G * D, G)} for _ in range(2)]
                   for _ in range(n)]
        self.head = {"down": w(G * D, r), "up": w(r, G * D)}
        self.ple = {l - 1: {"key": w(P, G * D), "value": w(P, D), "conv": w(f["ple_conv_kernel_size"], G * D)}
                    for l in f["ple_layer_ids"]}
        self.branch = [[w(D, D) for _ in range(2)] for _ in range(n)]

    def mm(self, component, x, wt):
        self.macs[component] += wt.shape[0] * wt.shape[1]
        return x @ wt

    def gated(self, x, p, inject=True):
        G, D = self.f["hc_count"], self.f["hidden_size"]
        xn = _rms(x.reshape(G, D)).reshape(-1)
        name = "mhc" if inject else "mhc_head"
        weights = 1 / (1 + np.exp(-self.mm(name, np.tanh(self.mm(name, xn, p["down"])), p["up"])))
        mixed = (weights * xn).reshape(G, D).mean(0)  # elementwise
        spread = self.mm(name, xn, p["inject"]) if inject else None
        return mixed, spread

    def ple_layer(self, x, p, history):
        G, D, n = self.f["hc_count"], self.f["hidden_size"], self.f["ngram_size"]
        emb = RNG.normal(size=self.f["ple_embed_dim"])  # the n-gram heads' rows, concatenated (a lookup)
        keys = _rms(self.mm("engram_proj", emb, p["key"]).reshape(G, D))
        value = self.mm("engram_proj", emb, p["value"])
        gates = []
        for g, stream in enumerate(_rms(x.reshape(G, D))):
            gates.append(keys[g] @ stream / np.sqrt(D))
            self.macs["engram_gate"] += D
        gated = (1 / (1 + np.exp(-np.array(gates))))[:, None] * value[None, :]
        history.append(_rms(gated).reshape(-1))
        out = 0
        for tap in range(p["conv"].shape[0]):  # taps n apart, within the document
            back = tap * n
            if back < len(history):
                out = out + p["conv"][tap] * history[-1 - back]
                self.macs["engram_conv"] += G * D
        return gated.reshape(-1) + out

    def token(self, x, histories):
        G = self.f["hc_count"]
        x = np.tile(x, G)
        for l in range(self.f["num_hidden_layers"]):
            if l in self.ple:
                x = x + self.ple_layer(x, self.ple[l], histories[l])
            for b in range(2):  # the mixer, then the FFN, each inside its gated residual
                mixed, spread = self.gated(x, self.gr[l][b])
                y = np.tanh(mixed @ self.branch[l][b])
                x = x + (spread[:, None] * y[None, :]).reshape(-1)
        return self.gated(x, self.head, inject=False)[0]

    def document(self, length, counted_from=0):
        histories = {l: [] for l in self.ple}
        for t in range(length):
            before = Counter(self.macs)
            self.token(RNG.normal(size=self.f["hidden_size"]), histories)
            if t < counted_from:
                self.macs = before


def _config(tmp_path, **kw):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(FILE))
    return maxflops.model_config(**load_hf_config(path).overrides, **kw)


def _trunk(b):
    return {k: v for k, v in b.components.items() if k in TRUNK}


@pytest.mark.parametrize("docs", [[9], [4, 1, 7]])
def test_the_trunk_is_the_naive_models_multiply_adds(docs, tmp_path):
    naive = NaiveTrunk(FILE)
    for L in docs:
        naive.document(L)
    want = {k: 2 * v for k, v in naive.macs.items()}
    b = maxflops.count(_config(tmp_path, mode="prefill", max_target_length=sum(docs)), segment_lengths=docs)
    assert _trunk(b) == want
    t = maxflops.count(_config(tmp_path, mode="train", max_target_length=sum(docs)), segment_lengths=docs)
    assert _trunk(t) == {k: 3 * v for k, v in want.items()}


@pytest.mark.parametrize("kvs", [[0, 5], [8]])
def test_decode_is_the_naive_models_next_token(kvs, tmp_path):
    naive = NaiveTrunk(FILE)
    for kv in kvs:
        naive.document(kv + 1, counted_from=kv)
    b = maxflops.count(_config(tmp_path, mode="decode", per_device_batch_size=len(kvs)), segment_lengths=kvs)
    assert _trunk(b) == {k: 2 * v for k, v in naive.macs.items()}


def test_the_file_reads_as_the_config_class_does(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(FILE))
    o = load_hf_config(path).overrides
    assert o["attention_layer_pattern"] == "DDDQ" and (o["qsa_block_size"], o["qsa_budget"]) == (2, 4)
    assert (o["mhc_expansion_rate"], o["mhc_lowrank"], o["mhc_plain_residual"], o["mhc_hyper_head"]) == (4, 3, True,
                                                                                                        True)
    assert o["engram_layers"] == (0, 1) and o["engram_head_dim"] * 2 * o["engram_num_heads"] == 8
    # a checkpoint's 'full_attention' is an indexed layer; without layer_types, every fourth
    for layer_types in (["linear_attention"] * 3 + ["full_attention"], None):
        path.write_text(json.dumps({k: v for k, v in {**FILE, "layer_types": layer_types}.items() if v is not None}))
        assert load_hf_config(path).overrides["attention_layer_pattern"] == "DDDQ"
    # no PLE layers: no Engram block
    path.write_text(json.dumps({**FILE, "ple_layer_ids": []}))
    assert "engram_layers" not in load_hf_config(path).overrides


@pytest.mark.parametrize("change, key", [
    (dict(indexer_budget=5), "indexer_budget"), (dict(indexer_kv_heads=2), "indexer_kv_heads"),
    (dict(indexer_head_dim=None), "indexer_head_dim"), (dict(hc_count=1), "hc_count"),
    (dict(ple_layer_ids=[4]), "ple_layer_ids"), (dict(ple_layer_ids=[5]), "ple_layer_ids"),
    (dict(ple_embed_dim=6), "ple_embed_dim"), (dict(eos_token_id=None), "eos_token_id"),
    (dict(output_gate_type="relu"), "output_gate_type"),
])
def test_a_model_transformers_cannot_build_is_one_clear_error(change, key, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**FILE, **change}))
    with pytest.raises(ValueError, match=f"'{key}'") as e:
        load_hf_config(path)
    assert "\n" not in str(e.value)
