"""Hardware FLOPs against transformers' own eager models, counted by torch's FlopCounterMode.

tests/fixtures/hf_eager/cases.json was made by the script beside it (torch 2.13 CPU, transformers 5.24): tiny
models of twenty-nine families (every width distinct), one forward pass and one training step (forward and backward of the
loss), every mm/bmm/conv torch executed counted. Here the config transformers saved for each model goes through
maxflops' Hugging Face loader, and ``count`` with the implementation knobs that describe transformers' eager code
must give exactly those counts.
"""

from __future__ import annotations

import json

import pytest

import maxflops
from maxflops import loaders
from maxflops.loaders import NOT_UNDERSTOOD
from repo import FIXTURES

HERE = FIXTURES / "hf_eager"
DATA = json.loads((HERE / "cases.json").read_text())
CASES = DATA["cases"]

# What transformers' eager code runs, per model type, as maxflops' hardware knobs. Every family computes the full
# masked square (attention_impl='dense'); DSA and CSA score and mask every key or block (dsa_impl='dense').
KNOBS = {
    "llama": {}, "qwen3_moe": {}, "gpt_oss": {},
    "deepseek_v32": dict(dsa_impl="dense"),  # its indexer weights the heads with a matmul
    # DeepSeek-V4 weights the indexer's heads and collapses the mHC streams by a multiply and a sum; at lengths below
    # both ratios (2) and between them (5) a compressor that forms no block still projects every token (forward
    # only: its empty result is a new zero tensor); at the HCA ratio (7) every compressor forms one
    **{name: dict(dsa_impl="dense", weighted_sum_impl="elementwise") for name in ("deepseek_v4", "deepseek_v4_t7")},
    # (at 2 tokens no CSA block forms: the blocks' kernel is moot)
    "deepseek_v4_t2": dict(weighted_sum_impl="elementwise", dead_compressor="forward"),
    "deepseek_v4_t5": dict(dsa_impl="dense", weighted_sum_impl="elementwise", dead_compressor="forward"),
    # torch_chunk_gated_delta_rule (chunks of 64, the UT transform by triangular solves) and a conv1d padded by
    # K - 1 on both sides
    "qwen3_next": dict(gdn_impl="chunked_solve", gdn_chunk_size=64, gdn_conv_impl="padded"),
    # mamba2_chunk_scan's torch path (the chunked SSD algorithm, chunk_size from the file) and causal_conv1d_fn's
    # torch path (a conv1d padded by K - 1 on both sides)
    "mamba2": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    "nemotron_h": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    "nemotron_h_latent": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    "bamba": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    "granitemoehybrid": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    # Mamba-1: mamba_selective_scan's recurrent loop (a state read per token) and the padded conv1d
    "mamba": dict(mamba_conv_impl="padded"), "jamba": dict(mamba_conv_impl="padded"),
    "falcon_h1": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    "olmo3": {}, "glm4_moe": {}, "minimax_m2": {}, "glm4_moe_lite": {},
    # as Qwen3-Next: chunks of 64 solved by triangular solves, a padded conv1d
    "qwen3_5": dict(gdn_impl="chunked_solve", gdn_chunk_size=64, gdn_conv_impl="padded"),
    "qwen3_5_moe": dict(gdn_impl="chunked_solve", gdn_chunk_size=64, gdn_conv_impl="padded"),
    # chunk_kimi_delta_attention's torch path (chunks of 64; its per-channel-decayed scores elementwise) and the
    # padded conv1d
    "kimi_linear": dict(kda_impl="chunked", kda_chunk_size=64, kda_conv_impl="padded"),
    # MiniMaxLightningAttention's blocks (block_size from the file)
    "minimax": dict(lightning_impl="blocked"),
    # torch_chunk_gated_delta_rule as Qwen3-Next's (chunks of 64, triangular solves), the padded conv1d
    "olmo_hybrid": dict(gdn_impl="chunked_solve", gdn_chunk_size=64, gdn_conv_impl="padded"),
    # Qwen3-VL's wrappers on text alone: the vision tower is listed by the loader and not run
    "qwen3_vl": {}, "qwen3_vl_moe": {},
    "mimo_v2_flash": {},  # its sinks are a softmax column, no matmul
    "gemma4": {}, "gemma4_moe": {}, "gemma4_unified": {}, "laguna": {},
    "step3p7": dict(mtp_num_layers=0),  # transformers builds no MTP layer (its file has one)
    "dots3_note": dict(dsa_impl="dense"),  # its eager indexer scores every key (DeepSeek-V3.2's)
    # LongCat-Flash's zero-computation experts: the share of the top-k slots its router sent to them in this run
    # (the fixture records the slots that went to real experts; routing is data, so it is a stated knob)
    # Zamba2: the Mamba-2 torch path (chunked SSD, padded conv) and its shared blocks' full masked square
    "zamba2": dict(mamba_impl="chunked", mamba_conv_impl="padded"),
    # Zamba (1): Mamba-1's torch path per head (the recurrence, the padded conv); its shared blocks' masked square
    "zamba": dict(mamba_conv_impl="padded"),
    # Reformer: its reversible layers are the loader's (remat_policy='reversible'); every chunk's square, as above
    "reformer_rounds": {}, "reformer_short": {}, "reformer_unset_buckets": {},
    # BLT: its patches are a stated input; the random patcher opens one at every byte (L + 1, the default)
    "blt_wide": {}, "blt_no_patcher": {},
    # Mllama's text model given image tokens (the case's cross_attention_states): a stated input
    "mllama": dict(cross_attention_tokens=CASES["mllama"]["image_tokens"]),
    "longcat_flash": dict(zero_expert_share=1 - CASES["longcat_flash"]["real_expert_slots"][0] / (
        CASES["longcat_flash"]["batch"] * CASES["longcat_flash"]["length"] * CASES["longcat_flash"]["config"]["moe_topk"])),
}
# Training steps not matched whole, with the reason: torch's FlopCounterMode charges a depthwise conv's backward as
# if it were dense over the channels (1,647,360 FLOPs for a forward of 25,344).
TRAIN_NOT_MATCHED = {"qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "mamba2", "nemotron_h", "nemotron_h_latent", "bamba",
                     "granitemoehybrid", "mamba", "jamba", "falcon_h1", "kimi_linear", "zamba2", "zamba"}
# Each of them matches exactly once the conv is set aside (everything but the conv's forward and its dense-priced
# backward equals maxflops' training step without its conv; the conv's forward matches on its own), and for the
# chunked linear attentions the matmuls torch runs differently from a compiled program (_autograd_skips).
CONV_SET_ASIDE = {name: "ssm_conv" for name in ("mamba2", "nemotron_h", "nemotron_h_latent", "bamba", "granitemoehybrid", "mamba", "jamba",
                                                "falcon_h1", "zamba2", "zamba")}
CONV_SET_ASIDE["kimi_linear"] = "kda_conv"  # its forward substitution is elementwise: no solve's gradient
# the gated delta nets of torch_chunk_gated_delta_rule: the conv, and the solves' and autograd's departures below
GDN_SOLVE = ("qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid")
CONV_SET_ASIDE.update({name: "gdn_conv" for name in GDN_SOLVE})


def config(name, mode, tmp_path):
    case = CASES[name]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["config"]))
    loaded = loaders.load_hf_config(path)
    assert NOT_UNDERSTOOD not in loaded.ignored.values()
    return maxflops.model_config(**{**loaded.overrides, **KNOBS[name]}, mode=mode, per_device_batch_size=case["batch"],
                                 max_target_length=case["length"], attention_impl="dense")


def test_fixture():
    assert DATA["meta"]["transformers"].startswith("5.") and DATA["meta"]["torch"].startswith("2.13")
    assert set(CASES) == set(KNOBS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_equals_transformers_eager(name, tmp_path):
    assert maxflops.count(config(name, "prefill", tmp_path)).hardware_flops == CASES[name]["total_flops"]


@pytest.mark.parametrize("name", sorted(set(CASES) - TRAIN_NOT_MATCHED))
def test_training_step_equals_transformers_eager(name, tmp_path):
    b = maxflops.count(config(name, "train", tmp_path))
    assert b.hardware_flops - _autograd_skips(name, b) == CASES[name]["train_flops"]


@pytest.mark.parametrize("name", sorted(TRAIN_NOT_MATCHED))
def test_unmatched_training_steps_are_still_unmatched(name, tmp_path):
    assert maxflops.count(config(name, "train", tmp_path)).hardware_flops != CASES[name]["train_flops"]


def _gdn_solve_departure(b, c, case) -> int:
    """torch_chunk_gated_delta_rule's training step against maxflops' 3x rule, per gated-delta-net layer, value head
    and sequence (chunks of C = 64, every sequence padded to whole chunks): autograd skips the first chunk's two reads
    of the zero initial state (one gradient each) and the last chunk's state update (both gradients), 4 matmuls of
    2 C dk dv; and each chunk's two triangular solves (the UT transform applied to the values and the decayed keys)
    add the matmul of their matrix's gradient, dA = -dX X^T: 2 C^2 (dv + dk). Returns maxflops' count less torch's."""
    C, nv, dk, dv = 64, c["gdn_num_value_heads"], c["gdn_key_head_dim"], c["gdn_value_head_dim"]
    chunks = -(-case["length"] // C)
    layers = sum(1 for r in b.layers if r.mixer == "gdn")
    per_sequence = 4 * 2 * C * dk * dv - chunks * 2 * C * C * (dv + dk)
    return layers * case["batch"] * nv * per_sequence


def _autograd_skips(name, b, c=None) -> int:
    """Backward matmuls torch's autograd leaves out of a linear-attention recurrence that a compiled program keeping
    its state (and maxflops' 3x rule, held against XLA in tests/families/test_kda.py and tests/families/test_lightning.py) runs: the
    first chunk or block reads a zero initial state that needs no gradient, and the last one's state update is
    never read by the loss (both of its gradients).
    - chunk_kimi_delta_attention: two reads of the state in the first chunk, one update in the last: 4 matmuls of
      2 C d^2 per head, sequence and layer (every sequence padded to whole chunks of C).
    - MiniMaxLightningAttention: one read in the first block (2 b_1 d^2), one update in the last (2 x 2 b_n d^2)."""
    case = CASES[name]
    if name in GDN_SOLVE:
        return _gdn_solve_departure(b, c, case)
    if name == "minimax":
        c = case["config"]
        H, d, B, L = c["num_attention_heads"], c["head_dim"], c["block_size"], case["length"]
        first, last = min(B, L), L - B * ((L - 1) // B)
        layers = c["layer_types"].count("linear_attention")
        return layers * case["batch"] * H * (2 * first * d * d + 2 * 2 * last * d * d)
    if name != "kimi_linear":
        return 0
    cfg = case["config"]["linear_attn_config"]
    H, d, C = cfg["num_heads"], cfg["head_dim"], 64
    layers = len(cfg["kda_layers"])
    return layers * case["batch"] * H * 4 * 2 * C * d * d


@pytest.mark.parametrize("name", sorted(CONV_SET_ASIDE))
def test_training_step_equals_transformers_eager_but_the_conv(name, tmp_path):
    ops, conv = CASES[name]["train_ops"], CONV_SET_ASIDE[name]
    torch_rest = CASES[name]["train_flops"] - ops["aten.convolution"] - ops["aten.convolution_backward"]
    cfg = config(name, "train", tmp_path)
    b = maxflops.count(cfg)
    assert b.hardware_flops - b.hardware_components[conv] - _autograd_skips(name, b, cfg) == torch_rest
    assert maxflops.count(config(name, "prefill", tmp_path)).hardware_components[conv] == \
        CASES[name]["forward_ops"]["aten.convolution"] == ops["aten.convolution"]
    # torch's counter charges the depthwise conv's backward densely: far above the forward's two matmuls' worth
    assert ops["aten.convolution_backward"] > 10 * ops["aten.convolution"]


def test_reformer_an_unset_num_buckets_is_the_one_transformers_set(tmp_path):
    """The case was built with num_buckets null (32 tokens in chunks of 4, max_position_embeddings 64): transformers
    set [4, 4] (16 buckets above its limit of 8, factorized) and saved it. Read null, the counts are the same."""
    case = CASES["reformer_unset_buckets"]
    assert case["config"]["num_buckets"] == [4, 4]
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**case["config"], "num_buckets": None}))
    overrides = loaders.load_hf_config(path).overrides
    assert "lsh_hash_width" not in overrides and overrides["lsh_max_positions"] == 64
    for mode, want in (("prefill", case["total_flops"]), ("train", case["train_flops"])):
        cfg = maxflops.model_config(**overrides, mode=mode, per_device_batch_size=case["batch"],
                                    max_target_length=case["length"], attention_impl="dense")
        assert maxflops.count(cfg).hardware_flops == want


def test_deepseek_v4_dead_compressors_are_forward_only(tmp_path):
    """Below a ratio no block forms: transformers projects every token and runs no backward; a compiled program
    (dead_compressor's default) drops the projections, so its count is below torch's by exactly their forward."""
    for name, dead in (("deepseek_v4_t2", True), ("deepseek_v4_t5", True), ("deepseek_v4_t7", False)):  # any dead?
        for mode, key in (("prefill", "total_flops"), ("train", "train_flops")):
            cfg = config(name, mode, tmp_path)
            compiled = maxflops.count(cfg, dead_compressor="eliminated")
            assert (compiled.hardware_flops < CASES[name][key]) == dead, (name, mode)
            eager = maxflops.count(cfg, dead_compressor="forward")
            assert eager.hardware_flops == CASES[name][key], (name, mode)
            prefill = config(name, "prefill", tmp_path)
            assert eager.hardware_flops - compiled.hardware_flops == \
                maxflops.count(prefill, dead_compressor="forward").hardware_flops - \
                maxflops.count(prefill, dead_compressor="eliminated").hardware_flops


def test_deepseek_v4_per_module(tmp_path):
    """Layer by layer: transformers' attention + MoE + both hyper-connection modules + the residual mixing (issued
    by the decoder layer itself) equal the layer's hardware FLOPs; the head is the logits and the hyper head."""
    b = maxflops.count(config("deepseek_v4", "prefill", tmp_path))
    modules = CASES["deepseek_v4"]["modules"]
    for i, row in enumerate(b.layers[:-1]):
        assert modules[f"DeepseekV4ForCausalLM.model.layers.{i}"] == row.hardware_flops, i
    head = b.layers[-1].hardware_components
    assert modules["DeepseekV4ForCausalLM.lm_head"] == head["logits"]
    assert modules["DeepseekV4ForCausalLM.model.hc_head"] == head["mhc_head"]


def test_the_knobs_matter(tmp_path):
    """Each knob above is needed: without it the count moves off transformers'."""
    for name, knobs in KNOBS.items():
        for key in knobs:
            case = CASES[name]
            path = tmp_path / "config.json"
            path.write_text(json.dumps(case["config"]))
            o = loaders.load_hf_config(path).overrides
            rest = {k: v for k, v in knobs.items() if k != key}
            if key in ("gdn_chunk_size", "kda_chunk_size"):
                continue  # only read with gdn_impl
            train = key == "mtp_num_layers"  # MTP modules are counted in training only
            b = maxflops.count(maxflops.model_config(**o, mode="train" if train else "prefill",
                                                     per_device_batch_size=case["batch"],
                                                     max_target_length=case["length"], attention_impl="dense",
                                                     **rest))
            assert b.hardware_flops != case["train_flops" if train else "total_flops"], (name, key)


# --- keys present that transformers' config classes derive ------------------------------------------------------
PRESENT = DATA["present"]


def present_config(name, mode, tmp_path, saved=False):
    """The file as its author wrote it (``saved``: as transformers saved it after building the model)."""
    case = PRESENT[name]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["config" if saved else "file"]))
    loaded = loaders.load_hf_config(path)
    return maxflops.model_config(**loaded.overrides, mode=mode, per_device_batch_size=case["batch"],
                                 max_target_length=case["length"], attention_impl="dense", **KNOBS[case["like"]])


@pytest.mark.parametrize("name", sorted(n for n in PRESENT if "error" not in PRESENT[n]))
def test_a_present_derived_key_is_read_as_transformers_reads_it(name, tmp_path):
    """Issue 29 (5): a key a config class derives in __post_init__, present in the file with another value (the
    class keeps it: its kwargs are set after __post_init__), counts what transformers' model runs with it: the
    published falcon-mamba-7b's intermediate_size beside expand 16, MLA's qk_head_dim, Kimi-Linear's head_dim,
    DeepSeek-V4's legacy qk_rope_head_dim, a Qwen3-VL-MoE text sliding_window, Gemma 3's _sliding_window_pattern
    beside the sliding_window_pattern kwarg, DeepSeek-V3's head_dim at its rope width and its qk_head_dim (A.X K1's,
    Youtu's, MiniCPM3's and Sarvam-MLA's likewise), Cohere 2's and Cohere Compass's head_dim (the attention's width),
    GPT-BigCode's num_key_value_heads (never read: multi_query decides), GPT-Neo's attention_layers (the list its
    layers read)."""
    case = PRESENT[name]
    assert maxflops.count(present_config(name, "prefill", tmp_path)).hardware_flops == case["total_flops"]
    assert maxflops.count(present_config(name, "prefill", tmp_path, saved=True)).hardware_flops == case["total_flops"]
    like = case["like"]
    b = maxflops.count(present_config(name, "train", tmp_path))
    if like in CONV_SET_ASIDE:
        ops = case["train_ops"]
        rest = case["train_flops"] - ops["aten.convolution"] - ops["aten.convolution_backward"]
        assert b.hardware_flops - b.hardware_components[CONV_SET_ASIDE[like]] - _autograd_skips(like, b) == rest
    else:
        assert b.hardware_flops - _autograd_skips(like, b) == case["train_flops"]


@pytest.mark.parametrize("name, match", [
    ("zamba2_derived_widths", r"'attention_head_dim' = 8: differs from 12, the value Zamba2Config derives"),
    ("deepseek_v3_head_dim_wider", r"'head_dim' = 6: differs from qk_rope_head_dim=4: deepseek_v3's config class"),
    ("axk1_head_dim_wider", r"'head_dim' = 6: differs from qk_rope_head_dim=4: axk1's config class"),
    ("youtu_head_dim_wider", r"'head_dim' = 6: differs from qk_rope_head_dim=4: youtu's config class")])
def test_a_present_derived_key_transformers_cannot_run_is_refused(name, match, tmp_path):
    """Zamba2Config keeps a present attention_head_dim (modeling_zamba2 sizes the shared block by it), and
    DeepseekV3Config, AXK1Config and YoutuConfig a present head_dim (their rotary embedding is that wide): other
    than the derived value, transformers' own model fails (the fixture records its error); the loader refuses the
    file, naming the key and the value."""
    case = PRESENT[name]
    assert case["error"].startswith("RuntimeError")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["file"]))
    with pytest.raises(ValueError, match=match):
        loaders.load_hf_config(path)


def test_zamba2_derived_keys_at_their_derived_values_load(tmp_path):
    """The same keys at the values the class derives (as transformers saves them) load, to the same count."""
    path = tmp_path / "config.json"
    good = dict(PRESENT["zamba2_derived_widths"]["file"], attention_head_dim=12, attention_hidden_size=48,
                mamba_headdim=12, hybrid_layer_ids=[1, 3])
    path.write_text(json.dumps(good))
    assert loaders.load_hf_config(path).overrides == loaders.load_hf_config(_write(tmp_path, CASES["zamba2"]["config"]))\
        .overrides


def test_gpt_neo_present_attention_layers_set_the_local_layers(tmp_path):
    """GPT-Neo's eager attention scores every key on its local layers too (a masked square), so its present case
    counts the same whatever the local layers are; the loader still takes them from attention_layers (the list
    modeling_gpt_neo reads), not from attention_types' expansion (global, local, global)."""
    case = PRESENT["gpt_neo_attention_layers"]
    for file in (case["file"], case["config"]):
        assert loaders.load_hf_config(_write(tmp_path, file)).overrides["attention_layer_pattern"] == "LLG"


def _write(tmp_path, data):
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    return path


# Types whose config class derives a key (tests/fixtures/hf_transformers' _classes.json) with no present case here,
# and why their loader's reading is shown elsewhere.
PRESENT_ELSEWHERE = {
    "emu3": "image_token_id: Emu3Config.__post_init__ takes it from vocabulary_map (no FLOPs effect; "
            "tests/loaders/test_emu3_file.py loads a file with it)",
    "modernbert-decoder": "sliding_window: ModernBertDecoderConfig.__post_init__ always sets it to local_attention // 2, "
                          "so a present one is never read (the zoo's saved file carries both; the loader reads "
                          "local_attention)",
    "step3p5": "per_layer_config: read when present (the step3p7 case loads the file as transformers saves it, with "
               "its sliding layers' own head count; tests/loaders/test_step3p7.py holds the checkpoint's legacy form "
               "to it)",
    "dots3_note_text": "per_layer_config: read when present (the dots3_note case loads the file as transformers saves "
                       "it, with its sliding layers' own widths)",
    "jetmoe": "num_attention_heads: JetMoeConfig.__post_init__ always sets it to num_key_value_heads x "
              "num_experts_per_tok, so a present one is never read (the zoo's saved file carries it; the loader "
              "applies the rule)",
    "deepseek_v2": "qk_head_dim: the MLA reader shared with deepseek_v32 and deepseek_v3 (cases above)",
    "glm_moe_dsa": "qk_head_dim: the same MLA reader; head_dim is a field its __post_init__ replaces",
    "gemma4_text": "per_layer_config: read when present (the gemma4 cases load the file as transformers saves it)",
    "gemma4_unified_text": "per_layer_config: read when present (the gemma4_unified case loads the file as "
                           "transformers saves it)",
    "cohere2_moe": "rope_parameters: kept when present, but no FLOPs effect (Cohere2MoeRotaryEmbedding multiplies the "
                   "position ids by inv_freq elementwise; a linear rope_parameters of theta 5000 counts as the "
                   "default's); a key no type's loader reads",
    "idefics3": "_pad_token_id: a token id (no FLOPs effect for every type)",
    "dbrx": "num_key_value_heads: DbrxConfig's copy of attn_config.kv_n_heads; a present one is kept and never read "
            "(modeling_dbrx sizes the heads by attn_config.kv_n_heads), so the loader reads it as no effect",
    "smolvlm": "_pad_token_id: a token id (no FLOPs effect for every type)",
    "voxtral": "hidden_size: VoxtralConfig's copy of its text model's; the text_config's is read (a no-effect key "
               "of the wrapper)",
    "recurrent_gemma": "head_dim: RecurrentGemmaConfig.__post_init__ sets hidden_size // num_attention_heads, and a "
                       "present one is kept and sizes the attention: the zoo's saved file carries 14 against the "
                       "derived 10 and is exact (test_hf_zoo.py); final_w_init_variance_scale: an initialisation",
    "bailing_hybrid": "linear_head_dim, linear_num_heads, linear_conv_kernel_dim: BailingHybridConfig derives them from "
                      "head_dim, num_attention_heads and short_conv_kernel_size, a present one set after (the zoo's "
                      "saved file carries all three and is exact); qk_head_dim: derived, never read",
    "inkling_text": "number_of_conv_states: InklingTextConfig sets 4 (the cache's conv states per layer), no FLOPs "
                    "effect (the zoo's saved file carries it)",
    "qwen4_exp_text": "number_of_conv_states: Qwen4ExpTextConfig sets 3 with PLE layers, else 1 (the cache's conv "
                      "states per layer), no FLOPs effect (the zoo's saved file carries it)",
    "hy_v4": "qk_head_dim: the MLA reader shared with deepseek_v32 (cases above): derived, a present one never read",
    "axk2": "qk_head_dim: the MLA reader shared with deepseek_v32 (cases above): derived, a present one never read",
    "reformer": "num_hidden_layers: ReformerConfig.__post_init__ sets len(attn_layers) whatever is given; the "
                "loader reads attn_layers (the zoo's saved file carries both and is exact)",
    "minimax_m3_vl": "merged_hidden_size: MiniMaxM3VLConfig.__post_init__ sets text hidden_size x spatial_merge_size^2, "
                     "the vision patch-merge MLP's input width (a tower's, named, not priced; the zoo's saved file "
                     "carries it)",
}


def test_every_derived_key_has_a_present_case():
    classes = json.loads((FIXTURES / "hf_transformers" / "class_defaults_full"
                          / "_classes.json").read_text())
    derived = {t for t, v in classes.items() if v.get("derived")}
    covered = {PRESENT[n]["file"].get("model_type") or PRESENT[n]["file"]["text_config"].get("model_type", "")
               for n in PRESENT}
    covered |= {"qwen3_vl_moe_text" if t == "qwen3_vl_moe" else t for t in covered}
    assert derived - covered == set(PRESENT_ELSEWHERE), sorted(derived - covered)
