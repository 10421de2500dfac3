"""Inkling 2 (``inkling2_text``): a naive Inkling 2 written from transformers' modeling_inkling2, run token by token
on each document with its own caches, counting the multiply-adds of every matmul and of each conv's taps by
component, equals the count read from an Inkling 2 config.json (packed documents, training, decode); the loader's
reading of the file; the new keys' refusals. torch's own count is the zoo's (tests/loaders/test_hf_zoo.py); the Flax
model's, XLA's (tests/xla/test_xla_model.py)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import maxflops
from maxflops.loaders import load_hf_config

RNG = np.random.default_rng(7)

# a tiny Inkling 2: sliding layers of their own heads and width, full layers at 2 and 4, blocks of 2 layers
FILE = {"model_type": "inkling2_text", "hidden_size": 12, "num_hidden_layers": 5, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 5, "swa_num_attention_heads": 2, "swa_num_key_value_heads": 1,
        "swa_head_dim": 4, "sliding_window_size": 3, "d_rel": 2, "rel_extent": 6, "conv_kernel_size": 3,
        "layer_types": ["hybrid_sliding", "hybrid_sliding", "hybrid", "hybrid_sliding", "hybrid"],
        "n_layers_per_attn_res_block": 2, "n_routed_experts": 4, "num_experts_per_tok": 2,
        "moe_intermediate_size": 7, "vocab_size": 40, "unpadded_vocab_size": 33}
# Inkling 2 Loop: layers 2 to 5 (two blocks) run three passes, messages gated through rank 3
LOOP = {**FILE, "model_type": "inkling2_loop_text", "num_hidden_layers": 7,
        "layer_types": FILE["layer_types"] + ["hybrid_sliding", "hybrid"], "loop_layer_index_start": 2,
        "loop_layer_index_end": 6, "loop_num_passes": 3, "loop_gate_rank": 3}


def _rms(x):
    return x / np.sqrt((x * x).mean() + 1e-6)


class NaiveInkling2:
    """Inkling2ForCausalLM's forward for one token at a time, its caches per document: the block attention residuals
    (three queries on a full layer's attention input), the sliding or full attention (q, k, v, the output gate, the
    sink and the relative states from D; the keys' and values' short convs, static or of per-token taps; the relative
    bias over the extent; softmax with the sink), the conv over each branch's output, the MoE of routed experts, the
    final aggregate and the head. ``macs`` counts every multiply-add by component."""

    def __init__(self, f):
        self.f, self.macs, self.dynamic_taps = f, Counter(), 0
        D, K = f["hidden_size"], f["conv_kernel_size"]
        self.layers = []
        for kind in f["layer_types"]:
            full = kind == "hybrid"
            H = f["num_attention_heads"] if full else f["swa_num_attention_heads"]
            Hkv = f["num_key_value_heads"] if full else f["swa_num_key_value_heads"]
            hd = f["head_dim"] if full else f["swa_head_dim"]
            extent = f["rel_extent"] if full else f["sliding_window_size"]
            w = {name: RNG.normal(size=shape) * 0.3 for name, shape in (
                ("q", (D, H * hd)), ("k", (D, Hkv * hd)), ("v", (D, Hkv * hd)), ("gate", (D, H * hd)),
                ("sink", (D, H)), ("rel", (D, H * f["d_rel"])), ("bank", (f["d_rel"], extent)), ("o", (H * hd, D)),
                ("k_static", (K, Hkv * hd)), ("v_static", (K, Hkv * hd)), ("k_taps", (D, Hkv * K)),
                ("v_taps", (D, Hkv * K)), ("conv_attn", (K, D)), ("conv_mlp", (K, D)),
                ("router", (D, f["n_routed_experts"])), ("res_attn", (3, D)), ("res_mlp", (D,)))}
            w["up"] = RNG.normal(size=(f["n_routed_experts"], D, 2 * f["moe_intermediate_size"])) * 0.3
            w["down"] = RNG.normal(size=(f["n_routed_experts"], f["moe_intermediate_size"], D)) * 0.3
            r = f.get("loop_gate_rank", 1)
            w["gates"] = [{"down": RNG.normal(size=(2 * D, r)), "forget": RNG.normal(size=(r, D)) * 0.3,
                           "msg": RNG.normal(size=(r, D)) * 0.3} for _ in range(4)]
            self.layers.append(dict(w, full=full, H=H, Hkv=Hkv, hd=hd, extent=extent))
        self.message_queries = [RNG.normal(size=(4, D)) for _ in f["layer_types"]]
        self.res_out = RNG.normal(size=D)
        self.head = RNG.normal(size=(D, f["unpadded_vocab_size"]))

    def mm(self, component, x, w):
        self.macs[component] += w.shape[0] * w.shape[1]
        return x @ w

    def aggregate(self, prefix, bank, query):
        rows = bank + [prefix]
        scores = np.array([_rms(r) @ query for r in rows])  # a D -> 1 score per row
        p = np.exp(scores - scores.max())
        p /= p.sum()
        self.macs["attn_res"] += 2 * len(rows) * len(query)  # the scores, then the weighted sum
        return sum(pi * r for pi, r in zip(p, rows))

    def conv(self, component, history, static, taps=None, group=1):
        """A causal conv over the last K inputs of ``history`` (the newest last): static taps per channel, plus
        per-token taps shared by ``group`` channels."""
        K = static.shape[0]
        out = 0
        for lag, x in enumerate(reversed(history[-K:])):
            weight = static[lag] + (np.repeat(taps[:, lag], group) if taps is not None else 0)
            out = out + weight * x
            self.macs[component] += x.size
            self.dynamic_taps += x.size if taps is not None else 0
        return out

    def attention(self, L, state, hq, hk, hv):
        H, Hkv, hd, K = L["H"], L["Hkv"], L["hd"], self.f["conv_kernel_size"]
        q = self.mm("qkv_proj", _rms(hq), L["q"]).reshape(H, hd)
        gate = self.mm("qkv_proj", _rms(hq), L["gate"])
        sink = self.mm("qkv_proj", _rms(hq), L["sink"])
        rel = self.mm("qkv_proj", _rms(hq), L["rel"]).reshape(H, -1)
        k, v = self.mm("qkv_proj", _rms(hk), L["k"]), self.mm("qkv_proj", _rms(hv), L["v"])
        state["k_in"].append(k)
        state["v_in"].append(v)
        if L["full"]:  # the taps: static per channel plus per-token ones per KV head, from the k and v inputs
            k_taps = self.mm("qkv_proj", _rms(hk), L["k_taps"]).reshape(Hkv, K)
            v_taps = self.mm("qkv_proj", _rms(hv), L["v_taps"]).reshape(Hkv, K)
            k = k + self.conv("kv_conv", state["k_in"], L["k_static"], k_taps, hd)
            v = v + self.conv("kv_conv", state["v_in"], L["v_static"], v_taps, hd)
        else:
            k = k + self.conv("kv_conv", state["k_in"], L["k_static"])
            v = v + self.conv("kv_conv", state["v_in"], L["v_static"])
        state["k"].append(k.reshape(Hkv, hd))
        state["v"].append(v.reshape(Hkv, hd))
        profiles = np.stack([self.mm("rel_logits", rel[h], L["bank"]) for h in range(H)])  # [H, extent]
        keys = len(state["k"]) if L["full"] else min(len(state["k"]), self.f["sliding_window_size"])
        out = np.zeros((H, hd))
        for h in range(H):
            g = h // (H // Hkv)
            scores = []
            for back in range(keys):  # the key `back` tokens before
                kv = state["k"][-1 - back][g]
                scores.append(q[h] @ kv + (profiles[h, back] if back < L["extent"] else 0.0))
                self.macs["core_attention"] += hd
            logits = np.array(scores + [sink[h]])
            p = np.exp(logits - logits.max())
            p /= p.sum()
            for back in range(keys):
                out[h] += p[back] * state["v"][-1 - back][g]
                self.macs["core_attention"] += hd
        gated = out.reshape(-1) / (1 + np.exp(-gate))
        return self.mm("out_proj", gated, L["o"])

    def moe(self, L, x):
        logits = self.mm("moe_router", x, L["router"])
        top = np.argsort(-logits)[:self.f["num_experts_per_tok"]]
        out = 0
        for e in top:
            gate, up = np.split(self.mm("moe_routed", x, L["up"][e]), 2)
            out = out + self.mm("moe_routed", gate / (1 + np.exp(-gate)) * up, L["down"][e])
        return out

    def layer(self, i, state, prefix, bank, messages=None):
        """Decoder layer i on (running residual, snapshots); ``messages``: a looped pass's, gating its inputs."""
        L, block = self.layers[i], self.f["n_layers_per_attn_res_block"]
        if i == 0:
            hq = hk = hv = prefix
        elif L["full"]:
            hq, hk, hv = (self.aggregate(prefix, bank, L["res_attn"][j]) for j in range(3))
        else:
            hq = hk = hv = self.aggregate(prefix, bank, L["res_attn"][0])
        if messages is not None:
            hq, hk, hv = (self.gate(L["gates"][j], h, messages[j]) for j, h in enumerate((hq, hk, hv)))
        write = i % block == 0
        if write:
            bank = bank + [prefix]
        out = self.attention(L, state, hq, hk, hv)
        state["attn_out"].append(out)
        out = out + self.conv("residual_conv", state["attn_out"], L["conv_attn"])
        prefix = out if write else prefix + out
        h = self.aggregate(prefix, bank, L["res_mlp"])
        if messages is not None:
            h = self.gate(L["gates"][3], h, messages[3])
        y = self.moe(L, _rms(h))
        state["mlp_out"].append(y)
        return prefix + y + self.conv("residual_conv", state["mlp_out"], L["conv_mlp"]), bank

    def gate(self, w, h, message):
        """Inkling2LoopMessageGate: from the normed input and message side by side (2D -> r), a forget gate and a
        message gate (r -> D each)."""
        g = self.mm("message_gate", np.concatenate([_rms(h), _rms(message)]), w["down"])
        forget, keep = np.tanh(self.mm("message_gate", g, w["forget"])), np.tanh(self.mm("message_gate", g, w["msg"]))
        return (1 - forget) * h + keep * message

    def token(self, x, states):
        prefix, bank = x, []
        f, n = self.f, len(self.layers)
        start, end = f.get("loop_layer_index_start", n), f.get("loop_layer_index_end", n)
        for i in range(start):
            prefix, bank = self.layer(i, states[(i, 1)], prefix, bank)
        before, previous = (prefix, bank), None
        for p in range(1, f.get("loop_num_passes", 1) + 1):  # each pass from the states the loop began with
            prefix, bank = before
            for j, i in enumerate(range(start, end)):
                messages = None
                if previous is not None:  # the previous pass's snapshots after its first, and its output
                    rows_bank, rows_out = previous
                    messages = [self.aggregate(rows_out, rows_bank, q) for q in self.message_queries[j]]
                prefix, bank = self.layer(i, states[(i, p)], prefix, bank, messages)
            previous = (bank[len(before[1]) + 1:], prefix)
        for i in range(max(end, start), n):
            prefix, bank = self.layer(i, states[(i, 1)], prefix, bank)
        return self.mm("logits", _rms(self.aggregate(prefix, bank, self.res_out)), self.head)

    def document(self, length, counted_from=0):
        """Run a document token by token; count the tokens from ``counted_from`` on."""
        passes = self.f.get("loop_num_passes", 1)
        states = {(i, p): {k: [] for k in ("k_in", "v_in", "k", "v", "attn_out", "mlp_out")}
                  for i in range(len(self.layers)) for p in range(1, passes + 1)}
        for t in range(length):
            before = Counter(self.macs)
            self.token(RNG.normal(size=self.f["hidden_size"]), states)
            if t < counted_from:
                self.macs, self.dynamic_taps = before, 0

    def flops(self):
        return {k: 2 * v for k, v in self.macs.items()}


def _config(tmp_path, file=FILE, **kw):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(file))
    return maxflops.model_config(**load_hf_config(path).overrides, **kw)


@pytest.mark.parametrize("file", [FILE, LOOP], ids=["inkling2", "loop"])
@pytest.mark.parametrize("docs", [[9], [4, 1, 6]])
def test_a_packed_prefill_and_training_are_the_naive_models(docs, file, tmp_path):
    naive = NaiveInkling2(file)
    for L in docs:
        naive.document(L)
    b = maxflops.count(_config(tmp_path, file, mode="prefill", max_target_length=sum(docs)), segment_lengths=docs)
    assert dict(b.components) == naive.flops()
    t = maxflops.count(_config(tmp_path, file, mode="train", max_target_length=sum(docs)), segment_lengths=docs)
    assert dict(t.components) == {k: 3 * v for k, v in naive.flops().items()}


@pytest.mark.parametrize("file", [FILE, LOOP], ids=["inkling2", "loop"])
@pytest.mark.parametrize("kvs", [[0, 5], [8]])
def test_decode_is_the_naive_models_next_token(kvs, file, tmp_path):
    naive = NaiveInkling2(file)
    for kv in kvs:
        naive.document(kv + 1, counted_from=kv)
    b = maxflops.count(_config(tmp_path, file, mode="decode", per_device_batch_size=len(kvs)), segment_lengths=kvs)
    assert dict(b.components) == naive.flops()


def test_a_loops_decode_reads_its_weights_once_and_each_passs_cache():
    """Decode bytes: the looped layers' weights once (the message gates' and queries' with them), each pass's own
    cache."""
    kw = dict(num_decoder_layers=6, attention_layer_pattern="LG", sliding_window_size=4, emb_dim=40,
              attn_res_block_size=2, mode="decode", decode_kv_length=9)
    plain = maxflops.decode_traffic(maxflops.model_config(**kw)).components
    looped = maxflops.decode_traffic(maxflops.model_config(**kw, layer_loops=("2-3*3",))).components
    messages = maxflops.decode_traffic(maxflops.model_config(**kw, layer_loops=("2-3*3",),
                                                             loop_message_rank=5)).components
    assert looped["weights"] == plain["weights"]
    assert looped["kv_read"] == plain["kv_read"] + 2 * (plain["kv_read"] // 6) * 2
    # two layers' four gates (2D x r + two r x D) and four message queries, at 2 bytes
    assert messages["weights"] - looped["weights"] == 2 * 2 * (4 * (2 * 40 * 5 + 2 * 5 * 40) + 4 * 40)


def test_a_loop_config_sets_the_loop_as_the_config_class_reads_it(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LOOP))
    o = load_hf_config(path).overrides
    assert o["layer_loops"] == ("2-5*3",) and o["loop_message_rank"] == 3
    flat = {k: v for k, v in LOOP.items() if not k.startswith("loop_")}
    path.write_text(json.dumps({**flat, "loop_config": {"core_start": 2, "core_end": 6, "num_passes": 3,
                                                        "gate_rank": 3}}))
    assert load_hf_config(path).overrides == o
    path.write_text(json.dumps({**LOOP, "loop_num_passes": 1}))  # one pass: no loop
    assert "layer_loops" not in load_hf_config(path).overrides


@pytest.mark.parametrize("change, key", [(dict(loop_layer_index_start=3), "loop_layer_index_start"),
                                          (dict(loop_layer_index_start=0), "loop_layer_index_start"),
                                          (dict(loop_layer_index_end=5), "loop_layer_index_end"),
                                          (dict(loop_layer_index_end=8), "loop_layer_index_end"),
                                          (dict(loop_num_passes=0), "loop_num_passes"),
                                          (dict(loop_config={"core_start": 1}), "loop_config")])
def test_a_loop_the_model_cannot_build_is_one_clear_error(change, key, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LOOP, **change}))
    with pytest.raises(ValueError, match=f"'{key}'") as e:
        load_hf_config(path)
    assert "\n" not in str(e.value)


def test_the_file_reads_as_the_config_class_does(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(FILE))
    o = load_hf_config(path).overrides
    assert o["attention_layer_pattern"] == "LLGLG" and o["layer_widths"] == (
        "num_query_heads@0-1+3=2", "num_kv_heads@0-1+3=1", "head_dim@0-1+3=4")
    assert o["vocab_size"] == 33  # the head's rows (unpadded_vocab_size); vocab_size is the embedding table's
    assert (o["kv_conv_dynamic_layers"], o["attn_res_qkv_layers"], o["attn_res_block_size"]) == ("G", "G", 2)
    assert o["attention_sink_proj"] and o["attention_output_gate"] and o["kv_conv_kernel"] == 3
    assert "shared_experts" not in o and "mlp_dim" not in o  # every FFN routed experts only
    # the attribute map's names read the same fields
    aliased = {**FILE, "intermediate_size": 7, "num_local_experts": 4}
    del aliased["moe_intermediate_size"], aliased["n_routed_experts"]
    path.write_text(json.dumps(aliased))
    assert load_hf_config(path).overrides == o


def test_the_hardware_taps_are_elementwise_unless_a_kernel_counts_them(tmp_path):
    """Hardware: the full layers' per-token taps run as a multiply and a sum (no matmul, the default), or as the model
    counts them (``dynamic_conv_impl='valid'``); the sliding layers' static convs are convs either way."""
    naive = NaiveInkling2(FILE)
    naive.document(9)
    b = maxflops.count(_config(tmp_path, mode="prefill", max_target_length=9))
    assert b.hardware_components["kv_conv"] == 2 * (naive.macs["kv_conv"] - naive.dynamic_taps)
    valid = maxflops.count(_config(tmp_path, mode="prefill", max_target_length=9, dynamic_conv_impl="valid"))
    assert valid.hardware_components["kv_conv"] == 2 * naive.macs["kv_conv"]


@pytest.mark.parametrize("kw, key", [
    (dict(kv_conv_dynamic_layers="GX", kv_conv_kernel=3), "kv_conv_dynamic_layers"),
    (dict(kv_conv_dynamic_layers="G"), "kv_conv_dynamic_layers"),
    (dict(attn_res_qkv_layers="G"), "attn_res_qkv_layers"),
    (dict(attn_res_qkv_layers="Q", attn_res_block_size=2), "attn_res_qkv_layers"),
    (dict(attention_sink_proj=True, attention_type="mla"), "attention_sink_proj"),
    (dict(attention_sink_proj=True, convention="megatron"), "convention"),
    (dict(loop_message_rank=3, layer_loops=("2-3*2",), num_decoder_layers=4), "loop_message_rank"),
    (dict(loop_message_rank=3, layer_loops=("1-2*2",), attn_res_block_size=2, num_decoder_layers=4), "layer_loops"),
    (dict(loop_message_rank=3, layer_loops=("0-1*2",), attn_res_block_size=2, num_decoder_layers=4), "layer_loops"),
])
def test_bad_input_is_one_clear_error(kw, key):
    with pytest.raises(ValueError, match=f"'{key}'"):
        maxflops.model_config(**kw)
