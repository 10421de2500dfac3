"""The zoo: every model type of transformers 5.24's causal-LM mapping, against transformers' own eager model.

tests/fixtures/hf_zoo/cases.json was made by the script beside it (torch 2.13 CPU, transformers 5.24): each decoder-only
type and multimodal wrapper built tiny from its own config class (every width distinct, each layer kind the type
has), one forward pass and one training step counted by torch's ``FlopCounterMode``. Here:

- every type the house reads loads the config transformers saved, and ``count`` (with the implementation knobs that
  describe transformers' eager code, as in tests/loaders/test_hf_eager.py) equals torch's forward count and its training
  step, where torch's autograd departs from a compiled program with the departure set aside by its closed form;
- every other type is refused with one line: what it is (not a decoder-only LM), or the form maxflops lacks;
- the coverage table in docs/hf-model-types.md is the one this fixture and the house give.
"""

from __future__ import annotations

import json
import os

import pytest
from test_hf_eager import KNOBS as EAGER_KNOBS

import maxflops
from maxflops.loaders import NOT_UNDERSTOOD, hf, load_hf_config
from maxflops.loaders.hf import unread
from repo import ROOT

ZOO = json.loads((ROOT / "tests" / "fixtures" / "hf_zoo" / "cases.json").read_text())
CASES = ZOO["cases"]
LM = {t for t, c in CASES.items() if c["kind"] in ("decoder", "wrapper")}
# the wrappers the loader reads beyond the causal-LM mapping (image-text-to-text and audio classes), proved alike
EXTRA = {t for t, c in CASES.items() if c["kind"] == "wrapper_extra"}
# read: the type, or the config its causal-LM class saves (gpt-sw3's is a gpt2 config; Emu3's its text model's)
def _type(name):
    return hf.get(name) or hf.get(CASES[name].get("config", {}).get("model_type", ""))


READ = sorted(t for t in LM | EXTRA if _type(t))

# Per type, the knobs that describe transformers' eager code (test_hf_eager.py's, for the types it proves there).
KNOBS = {t: EAGER_KNOBS[t] for t in READ if t in EAGER_KNOBS and t != "longcat_flash"}
# a text model runs as its wrapper's eager test says; Falcon-Mamba as Mamba
KNOBS |= {"qwen3_5_text": EAGER_KNOBS["qwen3_5"], "qwen3_5_moe_text": EAGER_KNOBS["qwen3_5_moe"],
          "falcon_mamba": EAGER_KNOBS["mamba"]}
KNOBS |= {
    # Lfm2ShortConv's torch path: a conv1d padded by K - 1 on both sides, sliced to the sequence
    "lfm2": dict(short_conv_impl="padded"), "lfm2_moe": dict(short_conv_impl="padded"),
    "lfm3": dict(short_conv_impl="padded"),
    # the zoo runs Mllama on text alone (its cross-attention layers idle; the eager case gives it image tokens)
    "mllama": {},
    # RecurrentGemmaRecurrentBlock: a conv1d padded by K - 1 on both sides, sliced to the sequence
    "recurrent_gemma": dict(rglru_conv_impl="padded"),
    # ZambaMambaMixer: Mamba-1's torch path per head (a conv1d padded by K - 1, the recurrence token by token)
    "zamba": dict(mamba_conv_impl="padded"),
    # DiffLlamaAttention: one attention call per value half, QK^T computed twice
    "diffllama": dict(differential_impl="two_calls"),
    # Llama4TextExperts runs every expert on every token (the router's scores weigh the outputs)
    "llama4_text": dict(moe_impl="dense"), "llama4": dict(moe_impl="dense"),
    # MiniMaxM3VLAttention's eager path: the full square masked to the picked blocks (its indexer over the full square:
    # attention_impl='dense')
    "minimax_m3_vl_text": dict(msa_impl="dense"), "minimax_m3_vl": dict(msa_impl="dense"),
    # its indexer scores every key, as DeepSeek-V3.2's
    "glm_moe_dsa": dict(dsa_impl="dense"), "axk2": dict(dsa_impl="dense"),
    # Ling's linear layers run chunk_kimi_delta_attention (chunks of 64), their conv padded on both sides
    "bailing_hybrid": dict(kda_impl="chunked", kda_chunk_size=64, kda_conv_impl="padded"),
    # InklingShortConvolution: a conv1d padded by K - 1 on both sides, sliced to the sequence
    "inkling_text": dict(aux_conv_impl="padded"),
    # Inkling 2's static convs as Inkling's (its dynamic convs' taps a multiply and a sum: the default)
    "inkling2_text": dict(aux_conv_impl="padded"), "inkling2_loop_text": dict(aux_conv_impl="padded"),
    # xLSTM's inference mode (the class default): whole chunks chunkwise, the tokens after them by the step kernel
    "xlstm": dict(mlstm_impl="chunked_then_recurrent"),
    # ZayaCCAProjection: the sequence padded by t0 - 1 + t1 - 1 zeros before both convs; its skip expert, biased by
    # -1 in a fresh model, is never picked
    "zaya": dict(aux_conv_impl="padded", zero_expert_share=0.0),
    # HYV4HyperConnection sums the pre-weighted streams elementwise (its indexer weighs its heads with a matmul)
    "hy_v4": dict(dsa_impl="dense", weighted_sum_impl="streams_elementwise"), "dots3_note_text": dict(dsa_impl="dense"),
    "dots3_note": dict(dsa_impl="dense"),
    # at 31 tokens no heavily compressed block forms (ratio 128): its compressor projects every token, forward only
    "deepseek_v4": dict(EAGER_KNOBS["deepseek_v4"], dead_compressor="forward"),
}
# transformers builds no MTP module (num_nextn_predict_layers is read, and priced by maxflops in training)
NO_MTP = dict(mtp_num_layers=0)
# Types whose training step torch's autograd runs otherwise than a compiled program, each departure set aside by its
# closed form (as tests/loaders/test_hf_eager.py does): a depthwise conv's backward, which FlopCounterMode prices as dense
# over the channels (its forward and backward ops come out of torch's count, maxflops' conv out of its own), and the
# state reads and updates autograd skips in the chunked linear attentions (departure() below).
GDN_SOLVE = {"qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "lara_mini",
             "qwen4_exp_text", "qwen4_exp"}
CONVS = ("ssm_conv", "gdn_conv", "kda_conv", "short_conv", "rglru_conv", "kv_conv", "residual_conv", "cca_conv",
         "engram_conv")
KNOBS |= {name: dict(gdn_impl="chunked_solve", gdn_chunk_size=64, gdn_conv_impl="padded") for name in GDN_SOLVE}
# Qwen4-Exp: its PLE conv padded before (every tap of every output), its gates' dot products a multiply and a sum, the
# QSA layers' eager attention the masked square
KNOBS |= {name: dict(KNOBS[name], aux_conv_impl="padded", weighted_sum_impl="elementwise", qsa_impl="dense")
          for name in ("qwen4_exp_text", "qwen4_exp")}
# LongCat-Flash's zero experts take a share of the routed slots that depends on the run's routing (a stated knob,
# zero_expert_share): test_hf_eager.py records the slots and proves it; the zoo run does not record them.
ROUTED_BY_DATA = {"longcat_flash"}


def eager_only(name) -> tuple:
    """(forward, training step) FLOPs transformers' eager model runs that the model needs not:
    - Gemma3nModel runs its vision and audio embedders (an embedding, a norm, a projection of the tower's width -> D)
      on every token, each a text token's dummy id, and keeps their output only where a token is the tower's (none
      on text): 3x in training (both operands take a gradient); held against the fixture's per-module count;
    - ZayaCCAProjection, without a cache, projects a zero vector per sequence (v_proj_delayed of zeros: the state
      before the first token, whose delayed value half is that projection's bias) on every layer: 2x in training
      (its weight's gradient; the zeros take none)."""
    case = CASES[name]
    cfg, tokens = case["config"], case["batch"] * case["length"]
    if case.get("model_class") == "Gemma3nForConditionalGeneration":
        d = cfg["text_config"]["hidden_size"]
        widths = (cfg["vision_config"]["hidden_size"], cfg["audio_config"]["hidden_size"])
        total = sum(2 * tokens * w * d for w in widths)
        assert total == case["modules"]["model.embed_vision"] + case["modules"]["model.embed_audio"]
        return total, 3 * total
    if case.get("model_class") == "ZayaForCausalLM":
        half = cfg["num_key_value_heads"] * cfg["head_dim"] // 2
        total = 2 * cfg["hidden_size"] * half * case["batch"] * cfg["num_hidden_layers"]
        return total, 2 * total
    return 0, 0


def _config(name, mode, tmp_path):
    case = CASES[name]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["config"]))
    loaded = load_hf_config(path)
    assert NOT_UNDERSTOOD not in loaded.ignored.values()
    knobs = KNOBS.get(name) or KNOBS.get(_type(name).wrapper or "", {})
    if loaded.overrides.get("mtp_num_layers"):
        knobs = dict(knobs, **NO_MTP)
    return maxflops.model_config(**{**loaded.overrides, **knobs}, mode=mode, per_device_batch_size=case["batch"],
                                 max_target_length=case["length"], attention_impl="dense")


def test_fixture():
    meta = ZOO["meta"]
    assert meta["transformers"] == "5.24.0" and meta["torch"].startswith("2.13")
    assert meta["per_kind"] == {"decoder": 145, "wrapper": 15, "not_decoder": 36}


@pytest.mark.parametrize("name", [t for t in READ if t not in ROUTED_BY_DATA])
def test_forward_equals_transformers_eager(name, tmp_path):
    assert CASES[name]["status"] == "ok", CASES[name]["status"]
    assert maxflops.count(_config(name, "prefill", tmp_path)).hardware_flops + eager_only(name)[0] == \
        CASES[name]["total_flops"]


def departure(b, c, case) -> int:
    """maxflops' training count less torch's in the recurrences autograd runs otherwise than a compiled program
    keeping its state (maxflops' 3x rule, held against XLA in tests/families/test_kda.py, test_lightning.py, test_gdn*):
    - torch_chunk_gated_delta_rule (chunks of C = 64): the first chunk's two reads of the zero initial state and the
      last chunk's state update need no gradient (4 matmuls of 2 C dk dv), and each chunk's two triangular solves
      add their matrix's gradient (2 C^2 (dv + dk));
    - chunk_kimi_delta_attention (chunks of 64): two reads in the first chunk, one update in the last (4 x 2 C d^2);
    - MiniMaxLightningAttention's blocks: one read in the first block (2 b_1 d^2), one update in the last (2 x 2 b_n
      d^2); per head, sequence and layer."""
    B, L = case["batch"], case["length"]
    layers = {m: sum(1 for r in b.layers if r.mixer == m) for m in ("gdn", "kda", "lightning")}
    total = 0
    if layers["gdn"]:
        C, nv, dk, dv = 64, c["gdn_num_value_heads"], c["gdn_key_head_dim"], c["gdn_value_head_dim"]
        chunks = -(-L // C)
        total += layers["gdn"] * B * nv * (4 * 2 * C * dk * dv - chunks * 2 * C * C * (dv + dk))
    if layers["kda"]:
        H, d, C = c["kda_num_heads"], c["kda_head_dim"], 64
        total += layers["kda"] * B * H * 4 * 2 * C * d * d
    if layers["lightning"]:
        H, d, blk = c["num_query_heads"], c["head_dim"], c["lightning_block_size"]
        first, last = min(blk, L), L - blk * ((L - 1) // blk)
        total += layers["lightning"] * B * H * (2 * first * d * d + 2 * 2 * last * d * d)
    return total


@pytest.mark.parametrize("name", [t for t in READ if t not in ROUTED_BY_DATA])
def test_training_step_equals_transformers_eager(name, tmp_path):
    """Exact; where torch ran a depthwise conv, the conv set aside on both sides (its forward is held equal below)."""
    case, c = CASES[name], _config(name, "train", tmp_path)
    b = maxflops.count(c)
    ops = case["train_ops"]
    conv_ops = ops.get("aten.convolution", 0) + ops.get("aten.convolution_backward", 0)
    convs = sum(b.hardware_components.get(k, 0) for k in CONVS)
    assert bool(conv_ops) == bool(convs), name
    assert b.hardware_flops - convs - departure(b, c, case) + eager_only(name)[1] == case["train_flops"] - conv_ops


@pytest.mark.parametrize("name", [t for t in READ if CASES[t]["forward_ops"].get("aten.convolution")])
def test_a_depthwise_convs_forward_equals_torchs(name, tmp_path):
    """The conv set aside in training: its forward is torch's conv op exactly, and torch prices its backward far
    above the forward's two matmuls' worth (dense over the channels)."""
    b = maxflops.count(_config(name, "prefill", tmp_path))
    assert sum(b.hardware_components.get(k, 0) for k in CONVS) == CASES[name]["forward_ops"]["aten.convolution"]
    assert CASES[name]["train_ops"]["aten.convolution_backward"] > 5 * CASES[name]["forward_ops"]["aten.convolution"]


@pytest.mark.parametrize("name", sorted(set(CASES) - set(READ)))
def test_every_other_type_is_refused_in_one_line(name, tmp_path):
    path = tmp_path / "config.json"
    case = CASES[name]
    path.write_text(json.dumps(case.get("config") or {"model_type": name}))
    with pytest.raises(ValueError) as e:
        load_hf_config(path)
    msg, saved = str(e.value), case.get("config", {}).get("model_type", name)  # (gpt-sw3 saves a gpt2 config)
    assert "\n" not in msg and f"'model_type' = {saved!r}" in msg
    if case["kind"] == "not_decoder":
        assert "not a decoder-only language model" in msg and name in unread.NOT_DECODER
    elif saved in unread.NEEDS:
        assert "it needs" in msg
    else:
        assert "unsupported model type" in msg


def test_the_unread_lists_name_only_types_of_the_mapping_the_house_does_not_read():
    assert set(unread.NOT_DECODER) == {t for t, c in CASES.items() if c["kind"] == "not_decoder"}
    saved = {c["config"]["model_type"] for c in CASES.values() if c.get("config")}  # (Mllama's text model)
    assert not set(unread.NEEDS) & set(READ) and not set(unread.NEEDS) & set(hf.model_types())
    # beyond the mapping: published types of remote code (tests/loaders/test_hf_published.py refuses their files by name)
    assert set(unread.NEEDS) - LM - saved == set()


def coverage_table() -> str:
    """docs/hf-model-types.md: every type of the mapping, its status and what it needs."""
    rows = []
    for name in sorted(set(CASES) - EXTRA):
        case, t = CASES[name], _type(name)
        if t:
            conv = bool(case["forward_ops"].get("aten.convolution"))
            proof = "forward exact" + (", routed slots proved in the eager tests" if name in ROUTED_BY_DATA else
                                       ", training exact" + (" (depthwise conv set aside)" if conv else ""))
            if name == "gemma3n":
                proof += "; the embedders transformers runs on every token's dummy id set aside"
            if name == "zaya":
                proof += "; the zero vector transformers projects per sequence set aside"
            status, note = "read", (f"text model `{t.wrapper}`; towers named, not priced. " if t.wrapper else "") + proof
        elif case["kind"] == "not_decoder":
            status, note = "not a decoder LM", unread.NOT_DECODER[name]
        elif name in unread.NEEDS:
            status, note = "needs a form", unread.NEEDS[name]
        else:
            status, note = "not read yet", "FLOP-equal to forms maxflops has; its loader module is not written"
        rows.append(f"| `{name}` | {case['kind']} | {status} | {note} |")
    counts = {s: sum(1 for r in rows if f"| {s} |" in r) for s in ("read", "needs a form", "not read yet",
                                                                    "not a decoder LM")}
    head = [
        "# Hugging Face model types",
        "",
        "<!-- generated by tests/loaders/test_hf_zoo.py from tests/fixtures/hf_zoo/cases.json and maxflops/loaders/hf; "
        "MAXFLOPS_REGENERATE=1 rewrites it -->",
        "",
        f"transformers {ZOO['meta']['transformers']}'s causal-LM mapping: {len(set(CASES) - EXTRA)} model types. "
        + ", ".join(f"{n} {s}" for s, n in counts.items()) + ".",
        "",
        "Read types are proved against torch's `FlopCounterMode` on transformers' own eager model "
        "(`tests/loaders/test_hf_zoo.py`). Beyond the mapping the house also reads "
        + ", ".join(f"`{n}`" for n in hf.model_types() if n not in set(CASES) - EXTRA) + "; of these, "
        + ", ".join(f"`{n}`" for n in sorted(EXTRA)) + " are proved in the zoo the same way.",
        "",
        "| type | kind | status | what it is / needs |",
        "|---|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n"


def test_the_coverage_table_is_current():
    path = ROOT / "docs" / "hf-model-types.md"
    want = coverage_table()
    if os.environ.get("MAXFLOPS_REGENERATE"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(want)
    assert path.read_text() == want, "stale: MAXFLOPS_REGENERATE=1 python -m pytest tests/loaders/test_hf_zoo.py"
