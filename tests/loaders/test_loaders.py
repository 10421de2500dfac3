"""maxflops.loaders: MaxText model YAMLs and Hugging Face config.json files -> schema overrides.

The oracle is the other route: a model loaded from its file must count exactly like the shipped config
(maxflops.load_config(name)), total and per-layer rows. Fixtures: tests/fixtures/ (see its README).
"""

import json
import subprocess
import sys

import pytest

import maxflops
from maxflops import loaders
from maxflops.loaders import NO_EFFECT, NOT_UNDERSTOOD
from maxflops.loaders.hf.unread_keys import UNREAD
from repo import ROOT, FIXTURES, quietly_inert

MAXTEXT_ALL = sorted(p.stem for p in (FIXTURES / "maxtext").glob("*.yml"))
HF_ALL = sorted(p.stem for p in (FIXTURES / "hf").glob("*.json"))
SHIPPED = set(maxflops.available_models())
MAXTEXT = [m for m in MAXTEXT_ALL if m in SHIPPED]  # fixtures of models shipped in configs/
HF = [m for m in HF_ALL if m in SHIPPED]

# Where the shipped config (MaxText's numbers) and the HF file legitimately differ, the comparison sets the
# shipped value on the HF route; each difference is written down in the shipped config's docstring.
HF_DIFFERENCES = {
    # MaxText's gemma3 vocab is 262144; the HF text_config gives none, so Gemma3TextConfig's 262208 applies.
    "gemma3-27b": {"vocab_size": 262144},
    # HF config.json has num_nextn_predict_layers 1; MaxText's YAML sets no mtp_num_layers (base.yml 0).
    "deepseek3-671b": {"mtp_num_layers": 0},
    "deepseek3.2-671b": {"mtp_num_layers": 0},
    # The checkpoint has one MTP module (its 44th compress ratio, a window-only layer); MaxText drops it.
    "deepseek4-284b": {"mtp_num_layers": 0},
}

SETTINGS = [
    {},
    {"max_target_length": 20480, "per_device_batch_size": 2},  # past the windows, chunks and top-k
    {"mode": "prefill", "max_target_length": 5000},
    {"mode": "decode", "decode_kv_length": 9000, "per_device_batch_size": 3},
]


def rows(b):
    return [(r.name, r.group, r.mixer, r.ffn, r.computes_index, dict(r.components)) for r in b.layers]


def assert_same_counts(overrides, name, settings):
    via_file = maxflops.count(maxflops.model_config(**overrides, **settings, model_name=name))
    shipped = maxflops.count(maxflops.load_config(name, **settings))
    assert via_file.total == shipped.total
    assert via_file.learnable_weight == shipped.learnable_weight
    assert dict(via_file.components) == dict(shipped.components)
    assert rows(via_file) == rows(shipped)


STEP_KEYS = ("mtp_num_layers", "per_device_batch_size", "max_target_length", "gradient_accumulation_steps")


def model_only(loaded):
    """A MaxText YAML's overrides without the step keys it took from base.yml (checked here: the step MaxText would
    run the file with), so that the model itself can be compared under each of SETTINGS."""
    base = loaders.MAXTEXT_BASE_DEFAULTS
    for key in STEP_KEYS:
        if key in loaded.defaults:
            assert loaded.overrides[key] == base[key] == loaded.defaults[key], key
    return {k: v for k, v in loaded.overrides.items() if k not in STEP_KEYS or k not in loaded.defaults}


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


DROP = object()


def hf_variant(tmp_path, fixture, **changes):
    """A copy of an HF fixture with keys changed (DROP deletes a key); 'text_config__key' reaches in."""
    data = json.loads((FIXTURES / "hf" / f"{fixture}.json").read_text())
    for key, value in changes.items():
        target = data
        if key.startswith("text_config__"):
            target, key = data["text_config"], key[len("text_config__"):]
        if value is DROP:
            target.pop(key, None)
        else:
            target[key] = value
    return write(tmp_path, f"{fixture}-variant.json", json.dumps(data))


# ------------------------------------------------------------------------------------------------------------
# the two routes count the same
# ------------------------------------------------------------------------------------------------------------


def test_fixtures_cover_the_required_models():
    required = {"llama3.1-8b", "mixtral-8x7b", "deepseek3-671b", "deepseek3.2-671b", "gemma3-27b", "gpt-oss-120b",
                "llama4-17b-128e", "qwen3-next-80b-a3b", "qwen3-235b-a22b"}
    assert required <= set(MAXTEXT)
    assert required | {"glm5"} <= set(HF)


def test_a_model_not_shipped_counts_the_same_by_both_files():
    """Qwen3-8B (dense, qk-norm) has a MaxText YAML and an HF config.json but no shipped config."""
    yml = loaders.load_maxtext_yaml(FIXTURES / "maxtext" / "qwen3-8b.yml")
    hf = loaders.load_hf_config(FIXTURES / "hf" / "qwen3-8b.json")
    for settings in SETTINGS:
        a = maxflops.count(maxflops.model_config(**model_only(yml), **settings))
        b = maxflops.count(maxflops.model_config(**hf.overrides, **settings))
        assert a.total == b.total and rows(a) == rows(b)


@pytest.mark.parametrize("name", MAXTEXT)
def test_maxtext_yaml_counts_like_the_shipped_config(name):
    loaded = loaders.load_maxtext_yaml(FIXTURES / "maxtext" / f"{name}.yml")
    assert loaded.source == "maxtext-yaml"
    for settings in SETTINGS:
        assert_same_counts(model_only(loaded), name, settings)


@pytest.mark.parametrize("name", HF)
def test_hf_config_counts_like_the_shipped_config(name):
    loaded = loaders.load_hf_config(FIXTURES / "hf" / f"{name}.json")
    assert loaded.source == "hf-config"
    overrides = {**loaded.overrides, **HF_DIFFERENCES.get(name, {})}
    for settings in SETTINGS:
        assert_same_counts(overrides, name, settings)


def test_the_documented_differences_are_real():
    """The keys set on the HF route above differ between the file and the shipped config (else drop them)."""
    for name, diff in HF_DIFFERENCES.items():
        loaded = loaders.load_hf_config(FIXTURES / "hf" / f"{name}.json")
        shipped = maxflops.load_config(name)
        for key, value in diff.items():
            assert shipped[key] == value and loaded.overrides[key] != value, (name, key)


@pytest.mark.parametrize("path", [FIXTURES / "maxtext" / f"{n}.yml" for n in MAXTEXT_ALL]
                         + [FIXTURES / "hf" / f"{n}.json" for n in HF_ALL], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_key_of_the_real_files_is_understood(path):
    loaded = loaders.detect_and_load(path)
    assert NOT_UNDERSTOOD not in loaded.ignored.values(), {k: v for k, v in loaded.ignored.items()
                                                          if v == NOT_UNDERSTOOD}
    data = loaders.read_file(path, "yaml" if path.suffix == ".yml" else "json")
    keys = set(data) | {f"text_config.{k}" for k in data.get("text_config", {})}
    assert set(loaded.ignored) <= keys  # reports only keys of the file


# ------------------------------------------------------------------------------------------------------------
# ignored keys: reported, never silently dropped
# ------------------------------------------------------------------------------------------------------------


def test_maxtext_ignored_keys_are_reported_with_a_reason(tmp_path):
    loaded = loaders.load_maxtext_yaml(FIXTURES / "maxtext" / "llama3.1-8b.yml")
    assert loaded.ignored == {"enable_dropout": NO_EFFECT, "normalization_layer_epsilon": NO_EFFECT,
                              "rope_max_timescale": NO_EFFECT}
    assert loaded.overrides["logits_via_embedding"] is False  # (the file's: the head is its own matrix)
    # the file sets no step: MaxText runs it with base.yml's (so does the loader, and says so)
    assert loaded.defaults == {"mtp_num_layers": 0, "per_device_batch_size": 12.0, "max_target_length": 2048,
                               "gradient_accumulation_steps": 1, "trainable_position_size": -1}
    text = (FIXTURES / "maxtext" / "llama3.1-8b.yml").read_text()
    p = write(tmp_path, "x.yml", text + "frobnicate_level: 3\nq_lora_rank: 64\n")
    with pytest.raises(ValueError, match=r"x\.yml: key not understood: 'frobnicate_level' = 3\. A key that could "
                                         r"change FLOPs is never dropped silently"):
        loaders.load_maxtext_yaml(p)
    ignored = loaders.load_maxtext_yaml(p, unknown="report").ignored
    assert ignored["frobnicate_level"] == NOT_UNDERSTOOD
    assert ignored["q_lora_rank"].startswith("unused")


def test_hf_ignored_keys_are_reported_with_a_reason(tmp_path):
    path = FIXTURES / "hf" / "llama3.1-8b.json"
    loaded = loaders.load_hf_config(path)
    used = {"model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
            "intermediate_size", "vocab_size", "hidden_act", "tie_word_embeddings"}
    assert loaded.ignored == {k: NO_EFFECT for k in json.loads(path.read_text()) if k not in used}
    assert loaded.defaults == {"head_dim": 128}  # absent: hidden_size // num_attention_heads
    # keys no transformers code of the type reads: accepted, each said; keys it reads and maxflops does not
    # understand (is_causal: the masks read it): an error naming each, or with unknown='report' listed
    p = hf_variant(tmp_path, "gemma3-27b", text_config__frobnicate=1, wibble=2)
    loaded = loaders.load_hf_config(p)
    assert loaded.ignored["text_config.frobnicate"] == loaded.ignored["wibble"] == UNREAD
    assert "ignored: the file's text_config.frobnicate, wibble (no transformers gemma3_text code reads them)" in \
        loaded.overrides["not_priced"]
    p = hf_variant(tmp_path, "gemma3-27b", text_config__is_causal=False, is_causal=True)
    with pytest.raises(ValueError, match=r"keys not understood: 'text_config\.is_causal' = False; 'is_causal' = "
                                         r"True\."):
        loaders.load_hf_config(p)
    ignored = loaders.load_hf_config(p, unknown="report").ignored
    assert ignored["text_config.is_causal"] == NOT_UNDERSTOOD
    assert ignored["is_causal"] == NOT_UNDERSTOOD
    assert ignored["vision_config"].startswith("not counted")
    assert ignored["text_config.query_pre_attn_scalar"] == NO_EFFECT


def test_defaults_of_absent_keys_are_reported():
    gemma = loaders.load_hf_config(FIXTURES / "hf" / "gemma3-27b.json")
    assert gemma.defaults == {"text_config.vocab_size": 262208, "text_config.hidden_activation": "gelu_pytorch_tanh",
                              "text_config.sliding_window_pattern": 6, "tie_word_embeddings": True}
    qwen = loaders.load_maxtext_yaml(FIXTURES / "maxtext" / "qwen3-next-80b-a3b.yml")
    assert qwen.defaults == {"mlp_activations": ["silu", "linear"], "logits_via_embedding": False,  # base.yml
                             "trainable_position_size": -1, "mtp_num_layers": 0,
                             "per_device_batch_size": 12.0, "max_target_length": 2048, "gradient_accumulation_steps": 1}


# ------------------------------------------------------------------------------------------------------------
# per-layer lists -> cyclic schema knobs
# ------------------------------------------------------------------------------------------------------------


def test_gemma3_layer_types_of_62_layers_give_lllllg(tmp_path):
    types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(62)]
    p = hf_variant(tmp_path, "gemma3-27b", text_config__layer_types=types, text_config__sliding_window_pattern=3)
    loaded = loaders.load_hf_config(p)
    assert loaded.overrides["attention_layer_pattern"] == "LLLLLG"
    assert loaded.overrides["sliding_window_size"] == 1024
    assert loaded.ignored["text_config.sliding_window_pattern"].startswith("superseded")
    # without layer_types: sliding_window_pattern (default 6) gives the same
    assert loaders.load_hf_config(FIXTURES / "hf" / "gemma3-27b.json").overrides["attention_layer_pattern"] == "LLLLLG"


@pytest.mark.parametrize("fixture, pattern", [("gpt-oss-120b", "LG"), ("llama4-17b-128e", "CCCG"),
                                              ("qwen3-next-80b-a3b", "DDDG"), ("deepseek3.2-671b", "G")])
def test_patterns_from_hf_and_maxtext(fixture, pattern):
    assert loaders.load_hf_config(FIXTURES / "hf" / f"{fixture}.json").overrides["attention_layer_pattern"] == pattern
    yml = loaders.load_maxtext_yaml(FIXTURES / "maxtext" / f"{fixture}.yml")
    assert yml.overrides["attention_layer_pattern"] == pattern


def test_llama4_no_rope_layers_mean_rope_1_nope_0(tmp_path):
    # 1 = the layer uses RoPE (chunked attention), 0 = NoPE (global attention): Llama4TextConfig.
    p = hf_variant(tmp_path, "llama4-17b-128e", text_config__no_rope_layers=[1, 0] * 24)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "CG"
    # absent: every no_rope_layer_interval-th (default 4) layer is NoPE
    p = hf_variant(tmp_path, "llama4-17b-128e", text_config__no_rope_layers=DROP, text_config__moe_layers=DROP)
    loaded = loaders.load_hf_config(p)
    assert loaded.overrides["attention_layer_pattern"] == "CCCG"
    assert loaded.overrides["interleave_moe_layer_step"] == 2  # from interleave_moe_layer_step
    # layer_types, when given, decide
    p = hf_variant(tmp_path, "llama4-17b-128e", text_config__layer_types=["chunked_attention", "full_attention"] * 24)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "CG"


def test_mistral_window_on_every_layer(tmp_path):
    # Mistral-7B-v0.1 style: a non-null sliding_window applies to every layer; absent, MistralConfig's 4096.
    p = hf_variant(tmp_path, "mixtral-8x7b", model_type="mistral", sliding_window=4096, num_local_experts=DROP,
                   num_experts_per_tok=DROP, router_aux_loss_coef=DROP, output_router_logits=DROP)
    o = loaders.load_hf_config(p).overrides
    assert (o["attention_layer_pattern"], o["sliding_window_size"], o["mlp_dim"]) == ("L", 4096, 14336)
    assert "num_experts" not in o
    p = hf_variant(tmp_path, "qwen3-8b", use_sliding_window=True, sliding_window=4096, max_window_layers=0)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "L"
    p = hf_variant(tmp_path, "qwen3-8b", use_sliding_window=True, sliding_window=4096)  # layers >= 36: none
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "G"
    # A per-layer list with no shorter period is its own pattern: 28 global layers, then 8 sliding ones.
    p = hf_variant(tmp_path, "qwen3-8b", use_sliding_window=True, sliding_window=4096, max_window_layers=28)
    o = loaders.load_hf_config(p).overrides
    assert o["attention_layer_pattern"] == "G" * 28 + "L" * 8
    mixed = maxflops.count(maxflops.model_config(**o, max_target_length=8192)).components["core_attention"]
    per_layer = {x: maxflops.count(quietly_inert(lambda: maxflops.model_config(  # (the window: inert on 'G')
        **{**o, "attention_layer_pattern": x}, max_target_length=8192))).components["core_attention"] // 36
                 for x in "GL"}
    assert mixed == 28 * per_layer["G"] + 8 * per_layer["L"]
    # Qwen3-MoE windows every layer (it has no layer_types and does not read max_window_layers).
    p = hf_variant(tmp_path, "qwen3-235b-a22b", use_sliding_window=True, sliding_window=8, max_window_layers=28)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "L"


def test_qwen3_next_full_attention_interval_alone(tmp_path):
    p = hf_variant(tmp_path, "qwen3-next-80b-a3b", layer_types=DROP, full_attention_interval=2)
    o = loaders.load_hf_config(p).overrides
    assert o["attention_layer_pattern"] == "DG"
    assert o["attention_output_gate"] is True and o["shared_expert_gate"] is True


def test_layer_types_that_are_not_periodic_are_one_letter_per_layer(tmp_path):
    types = ["sliding_attention"] * 35 + ["full_attention"]
    p = hf_variant(tmp_path, "gpt-oss-120b", layer_types=types)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "L" * 35 + "G"
    p = hf_variant(tmp_path, "llama4-17b-128e", text_config__num_hidden_layers=4, text_config__layer_types=DROP,
                   text_config__no_rope_layers=[1, 1, 1, 0], text_config__moe_layers=DROP)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "CCCG"
    p = hf_variant(tmp_path, "gpt-oss-120b", layer_types=["sliding_attention", "full_attention"] * 3)
    with pytest.raises(ValueError, match="layer_types.*6 entries for num_hidden_layers=36"):
        loaders.load_hf_config(p)
    p = hf_variant(tmp_path, "gpt-oss-120b", layer_types=["mamba"] * 36)
    with pytest.raises(ValueError, match="layer_types.*'mamba' is not supported"):
        loaders.load_hf_config(p)


def test_glm52_index_share(tmp_path):
    o = loaders.load_hf_config(FIXTURES / "hf" / "glm5.json").overrides
    assert (o["index_topk_freq"], o["index_skip_offset"], o["mtp_num_layers"]) == (4, 3, 1)
    assert o["use_sparse_indexer"] and o["index_n_heads"] == 32
    # the same schedule written out per layer (GlmMoeDsaConfig's rule) or as a pattern string
    full = [max(i - 3 + 1, 0) % 4 == 0 for i in range(78)]
    p = hf_variant(tmp_path, "glm5", indexer_types=["full" if f else "shared" for f in full])
    assert loaders.load_hf_config(p).overrides == o
    p = hf_variant(tmp_path, "glm5", index_topk_pattern="".join("F" if f else "S" for f in full),
                   index_topk_freq=DROP, index_skip_topk_offset=DROP)
    assert loaders.load_hf_config(p).overrides == o
    # GLM-5 / 5.1: no IndexShare keys, every layer runs its indexer
    p = hf_variant(tmp_path, "glm5", index_topk_freq=DROP, index_skip_topk_offset=DROP)
    assert "index_topk_freq" not in loaders.load_hf_config(p).overrides
    # a schedule the schema's rule cannot express
    p = hf_variant(tmp_path, "glm5", indexer_types=["full", "shared", "full"] + ["shared"] * 75)
    with pytest.raises(ValueError, match="key 'indexer_types'.*cannot be expressed"):
        loaders.load_hf_config(p)


def test_moe_layer_lists(tmp_path):
    # Qwen3-MoE: mlp_only_layers as a dense prefix, decoder_sparse_step as the interleave
    p = hf_variant(tmp_path, "qwen3-235b-a22b", mlp_only_layers=[0, 1])
    o = loaders.load_hf_config(p).overrides
    assert (o["first_num_dense_layers"], o["mlp_dim"]) == (2, 12288)
    p = hf_variant(tmp_path, "qwen3-235b-a22b", decoder_sparse_step=2)
    assert loaders.load_hf_config(p).overrides["interleave_moe_layer_step"] == 2
    p = hf_variant(tmp_path, "qwen3-235b-a22b", mlp_only_layers=[5])
    with pytest.raises(ValueError, match="key 'mlp_only_layers'.*cannot be expressed"):
        loaders.load_hf_config(p)
    # DeepSeek: layer_idx % moe_layer_freq == 0 is not the schema's (l+1) % s == 0
    p = hf_variant(tmp_path, "deepseek3-671b", moe_layer_freq=2)
    with pytest.raises(ValueError, match="key 'moe_layer_freq'"):
        loaders.load_hf_config(p)
    # GLM: mlp_layer_types
    p = hf_variant(tmp_path, "glm5", mlp_layer_types=["dense"] * 3 + ["sparse"] * 75)
    assert loaders.load_hf_config(p).overrides["first_num_dense_layers"] == 3


def test_qwen_shared_expert_width(tmp_path):
    p = hf_variant(tmp_path, "qwen3-next-80b-a3b", shared_expert_intermediate_size=1024)
    loaded = loaders.load_hf_config(p)
    assert loaded.overrides["shared_experts"] == 2
    assert "2 shared experts" in loaded.ignored["shared_expert_intermediate_size"]
    # not a multiple of moe_intermediate_size: one shared expert of its own width
    p = hf_variant(tmp_path, "qwen3-next-80b-a3b", shared_expert_intermediate_size=768)
    loaded = loaders.load_hf_config(p)
    assert (loaded.overrides["shared_experts"], loaded.overrides["shared_expert_mlp_dim"]) == (1, 768)
    one = maxflops.count(maxflops.model_config(**loaded.overrides, mode="prefill", max_target_length=8))
    shared = one.components["moe_shared"] // one.tokens  # per token: gate+up+down of 768, and the gate D -> 1
    assert shared == 48 * (3 * 2 * 2048 * 768 + 2 * 2048)


def test_maxtext_indexer_names_old_and_new(tmp_path):
    new = FIXTURES / "maxtext" / "deepseek3.2-671b.yml"
    text = new.read_text()
    old_text = (text.replace("use_indexer:", "use_sparse_indexer:").replace("indexer_n_heads:", "index_n_heads:")
                .replace("indexer_head_dim:", "index_head_dim:").replace("indexer_topk:", "index_topk:"))
    assert old_text != text
    want = loaders.load_maxtext_yaml(new).overrides
    assert want["use_sparse_indexer"] and (want["index_n_heads"], want["index_head_dim"], want["index_topk"]) == (
        64, 128, 2048)
    assert loaders.load_maxtext_yaml(write(tmp_path, "old.yml", old_text)).overrides == want
    both = loaders.load_maxtext_yaml(write(tmp_path, "both.yml", text + "index_topk: 2048\n"))
    assert both.overrides == want and both.ignored["index_topk"].startswith("superseded")
    with pytest.raises(ValueError, match="key 'index_topk' = 1024: disagrees with indexer_topk=2048"):
        loaders.load_maxtext_yaml(write(tmp_path, "clash.yml", text + "index_topk: 1024\n"))


def test_maxtext_gemma2_and_global_parameter_scale(tmp_path):
    gemma2 = """
base_emb_dim: 3584
base_num_query_heads: 16
base_num_kv_heads: 8
base_mlp_dim: 14336
base_num_decoder_layers: 21 # half of the real number of layers: [local, global] merged into one layer
head_dim: 256
mlp_activations: ["gelu","linear"]
vocab_size: 256128
decoder_block: "gemma2"
normalization_layer_epsilon: 1.e-06
logits_via_embedding: true
final_logits_soft_cap: 30.0
attn_logits_soft_cap: 50.0
sliding_window_size: 4096
use_post_attn_norm: true
use_post_ffw_norm: true
"""  # MaxText gemma2-9b.yml (snapshot e591f30c), license header cut, one comment shortened
    o = loaders.load_maxtext_yaml(write(tmp_path, "gemma2-9b.yml", gemma2)).overrides
    assert (o["num_decoder_layers"], o["attention_layer_pattern"], o["sliding_window_size"]) == (42, "LG", 4096)
    # global_parameter_scale 8 = 2^3: MaxText doubles emb, heads, mlp and layers
    text = (FIXTURES / "maxtext" / "llama2-7b.yml").read_text() + "global_parameter_scale: 8\n"
    o = loaders.load_maxtext_yaml(write(tmp_path, "big.yml", text)).overrides
    assert (o["emb_dim"], o["num_query_heads"], o["mlp_dim"], o["num_decoder_layers"]) == (8192, 64, 22016, 64)
    text = (FIXTURES / "maxtext" / "llama2-7b.yml").read_text() + "global_parameter_scale: 2\n"
    o = loaders.load_maxtext_yaml(write(tmp_path, "two.yml", text)).overrides  # heads and mlp only
    assert (o["emb_dim"], o["num_query_heads"], o["mlp_dim"], o["num_decoder_layers"]) == (4096, 64, 22016, 32)


def test_maxtext_run_keys(tmp_path):
    text = (FIXTURES / "maxtext" / "llama3.1-8b.yml").read_text()
    p = write(tmp_path, "run.yml", text + "per_device_batch_size: 4\nmax_target_length: 8192\n"
                                          "gradient_accumulation_steps: 2\n")
    o = loaders.load_maxtext_yaml(p).overrides
    assert (o["per_device_batch_size"], o["max_target_length"], o["gradient_accumulation_steps"]) == (4.0, 8192, 2)
    cfg = maxflops.model_config(**o, model_name="llama3.1-8b")
    assert maxflops.count(cfg).total == maxflops.count(maxflops.load_config(
        "llama3.1-8b", per_device_batch_size=4, max_target_length=8192, gradient_accumulation_steps=2)).total


# ------------------------------------------------------------------------------------------------------------
# bad input: ValueError naming the file, the key and the value
# ------------------------------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    for load in (loaders.load_maxtext_yaml, loaders.load_hf_config, loaders.detect_and_load):
        for name in ("nope.yml", "nope.json"):
            with pytest.raises(ValueError, match=r"nope\.(yml|json): no such file"):
                load(tmp_path / name)


def test_invalid_yaml_and_json(tmp_path):
    with pytest.raises(ValueError, match=r"bad\.yml: invalid YAML"):
        loaders.load_maxtext_yaml(write(tmp_path, "bad.yml", "base_emb_dim: [1, 2\n"))
    with pytest.raises(ValueError, match=r"bad\.json: invalid JSON"):
        loaders.load_hf_config(write(tmp_path, "bad.json", '{"model_type": "llama",}'))
    with pytest.raises(ValueError, match=r"list\.json: expected a mapping"):
        loaders.load_hf_config(write(tmp_path, "list.json", "[1, 2]"))
    with pytest.raises(ValueError, match=r"empty\.yml: expected a mapping"):
        loaders.load_maxtext_yaml(write(tmp_path, "empty.yml", ""))


def test_unsupported_model_type_and_decoder_block(tmp_path):
    with pytest.raises(ValueError, match=r"x\.json: key 'model_type' = 'bert': not a decoder-only language model: encoder "):
        loaders.load_hf_config(write(tmp_path, "x.json", '{"model_type": "bert", "hidden_size": 768}'))
    with pytest.raises(ValueError, match=r"y\.json: key 'model_type' = <absent>: required key is missing"):
        loaders.load_hf_config(write(tmp_path, "y.json", '{"hidden_size": 768}'))
    with pytest.raises(ValueError, match=r"z\.yml: key 'attention_type' = 'global': decoder_block 'deepseek4' runs "
                                         r"'compressed' attention"):
        loaders.load_maxtext_yaml(write(tmp_path, "z.yml", "decoder_block: deepseek4\nbase_emb_dim: 64\n"))
    with pytest.raises(ValueError, match=r"w\.yml: key 'attention_type' = 'local_sliding'"):
        loaders.load_maxtext_yaml(write(tmp_path, "w.yml", "attention_type: local_sliding\n"))


def test_wrong_types(tmp_path):
    p = hf_variant(tmp_path, "llama3.1-8b", hidden_size="4096")
    with pytest.raises(ValueError, match=r"llama3\.1-8b-variant\.json: key 'hidden_size' = '4096': expected an "
                                         "integer, got str"):
        loaders.load_hf_config(p)
    p = hf_variant(tmp_path, "llama3.1-8b", num_hidden_layers=True)
    with pytest.raises(ValueError, match="key 'num_hidden_layers' = True: expected an integer, got bool"):
        loaders.load_hf_config(p)
    p = hf_variant(tmp_path, "gemma3-27b", text_config__head_dim=12.5)
    with pytest.raises(ValueError, match=r"key 'text_config\.head_dim' = 12\.5: expected an integer"):
        loaders.load_hf_config(p)
    p = hf_variant(tmp_path, "gemma3-27b", text_config=[1])
    with pytest.raises(ValueError, match="key 'text_config' = \\[1\\]: expected a mapping"):
        loaders.load_hf_config(p)
    with pytest.raises(ValueError, match=r"t\.yml: key 'base_emb_dim' = 'big': expected an integer"):
        loaders.load_maxtext_yaml(write(tmp_path, "t.yml", "base_emb_dim: big\n"))
    with pytest.raises(ValueError, match=r"u\.yml: key 'mlp_activations' = 'silu': expected a list"):
        loaders.load_maxtext_yaml(write(tmp_path, "u.yml", "mlp_activations: silu\n"))
    with pytest.raises(ValueError, match=r"v\.yml: key 'use_indexer' = 'yes please': expected true or false"):
        loaders.load_maxtext_yaml(write(tmp_path, "v.yml", "use_indexer: yes please\n"))


def test_missing_keys_and_impossible_models(tmp_path):
    # absent: LlamaConfig's default (and the post-init head_dim from it); DeepseekV2Config's default top-k is null
    assert loaders.load_hf_config(hf_variant(tmp_path, "llama3.1-8b", hidden_size=DROP)).defaults == {
        "hidden_size": 4096, "head_dim": 128}
    p = hf_variant(tmp_path, "deepseek2-16b", num_experts_per_tok=DROP)
    with pytest.raises(ValueError, match="key 'num_experts_per_tok' = <absent>: required key is missing"):
        loaders.load_hf_config(p)
    p = hf_variant(tmp_path, "gpt-oss-120b", sliding_window=None)  # sliding layers, a null window
    with pytest.raises(ValueError, match="key 'sliding_window' = None: null: transformers builds no gpt_oss model"):
        loaders.load_hf_config(p)
    assert loaders.load_hf_config(hf_variant(tmp_path, "gpt-oss-120b", sliding_window=DROP)).defaults == {
        "sliding_window": 128}  # absent: GptOssConfig's default
    text = (FIXTURES / "maxtext" / "llama4-17b-128e.yml").read_text().replace("chunk_attn_window_size: 8192", "")
    with pytest.raises(ValueError, match=r"key 'chunk_attn_window_size' = <absent>: decoder_block 'llama4' runs chunked"):
        loaders.load_maxtext_yaml(write(tmp_path, "l4.yml", text))
    text = (FIXTURES / "maxtext" / "mixtral-8x7b.yml").read_text().replace("base_moe_mlp_dim: 14336", "")
    with pytest.raises(ValueError, match=r"key 'base_moe_mlp_dim' = <absent>: must be positive"):
        loaders.load_maxtext_yaml(write(tmp_path, "mx.yml", text))
    with pytest.raises(ValueError, match="key 'global_parameter_scale' = 3: must be a power of two"):
        loaders.load_maxtext_yaml(write(tmp_path, "g.yml", "global_parameter_scale: 3\n"))
    # a file whose numbers make no valid config: the schema's own message, with the file
    p = hf_variant(tmp_path, "llama3.1-8b", num_key_value_heads=5)
    with pytest.raises(ValueError, match=r"variant\.json: the file gives an invalid model: key 'num_key_value_heads' "
                                         r"\(maxflops' 'num_kv_heads'\): 5 does not divide num_query_heads=32"):
        loaders.load_hf_config(p)


def test_detect_and_load(tmp_path):
    yml = FIXTURES / "maxtext" / "mixtral-8x7b.yml"
    assert loaders.detect_and_load(yml).source == "maxtext-yaml"
    yaml_copy = write(tmp_path, "mixtral.YAML", yml.read_text())
    assert loaders.detect_and_load(yaml_copy) == loaders.load_maxtext_yaml(yml)
    assert loaders.detect_and_load(str(FIXTURES / "hf" / "mixtral-8x7b.json")).source == "hf-config"
    with pytest.raises(ValueError, match=r"model\.txt: cannot tell the format from the extension '\.txt'"):
        loaders.detect_and_load(write(tmp_path, "model.txt", "{}"))
    with pytest.raises(ValueError, match="extension '\\(none\\)'"):
        loaders.detect_and_load(tmp_path / "config")


def test_import_is_cheap():
    code = ("import sys, maxflops.loaders; bad = {'yaml', 'jax', 'numpy'} & set(sys.modules); "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_transformers_spellings_qwen3_moe_num_local_experts_and_gemma3_private_pattern(tmp_path):
    p = hf_variant(tmp_path, "qwen3-235b-a22b", num_experts=DROP, num_local_experts=128)
    assert loaders.load_hf_config(p).overrides["num_experts"] == 128
    p = hf_variant(tmp_path, "qwen3-235b-a22b", num_local_experts=64)
    with pytest.raises(ValueError, match="key 'num_local_experts' = 64: disagrees with num_experts=128"):
        loaders.load_hf_config(p)
    p = hf_variant(tmp_path, "gemma3-27b", text_config___sliding_window_pattern=6)
    loaded = loaders.load_hf_config(p)
    assert not any(k.endswith("_sliding_window_pattern") and v.startswith(NOT_UNDERSTOOD)
                   for k, v in loaded.ignored.items())
    p = hf_variant(tmp_path, "gemma3-27b", text_config___sliding_window_pattern=6, text_config__layer_types=DROP,
                   text_config__sliding_window_pattern=DROP)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "LLLLLG"
    # alone, the underscored attribute changes nothing: Gemma3TextConfig derives layer_types from the
    # sliding_window_pattern kwarg, absent 6 (transformers 5.24: _sliding_window_pattern=2 alone gives LLLLLG)
    p = hf_variant(tmp_path, "gemma3-27b", text_config___sliding_window_pattern=2, text_config__layer_types=DROP,
                   text_config__sliding_window_pattern=DROP)
    assert loaders.load_hf_config(p).overrides["attention_layer_pattern"] == "LLLLLG"


TRANSFORMERS = FIXTURES / "hf_transformers"
WRITTEN = sorted(p.stem for p in TRANSFORMERS.glob("*.json") if p.name != "versions.json")


@pytest.mark.parametrize("name", WRITTEN)
def test_files_as_transformers_writes_them_count_like_the_originals(name):
    """tests/fixtures/hf_transformers/ holds each HF fixture saved by transformers itself (its generate.py): the
    keys transformers adds on save are understood and change no count."""
    written = loaders.load_hf_config(TRANSFORMERS / f"{name}.json")
    assert NOT_UNDERSTOOD not in written.ignored.values()
    original = loaders.load_hf_config(FIXTURES / "hf" / f"{name}.json")
    for settings in SETTINGS:
        a = maxflops.count(maxflops.model_config(**written.overrides, **settings))
        b = maxflops.count(maxflops.model_config(**original.overrides, **settings))
        assert (a.total, a.hardware_flops) == (b.total, b.hardware_flops), (name, settings)


def test_transformers_versions_and_what_it_refused():
    versions = json.loads((TRANSFORMERS / "versions.json").read_text())
    assert versions["transformers"].startswith("5.")
    # transformers 5.24 refuses Llama 4's published attn_temperature_tuning (an int where it wants a bool)
    assert set(versions["refused"]) == {"llama4-17b-128e.json"}
    assert set(WRITTEN) | {"llama4-17b-128e"} == {p.stem for p in (FIXTURES / "hf").glob("*.json")}


# Where a class's defaults are not the published model: GlmMoeDsaConfig() has no MTP layer and every layer runs
# its own indexer (indexer_types all 'full'); the published file has one MTP layer and shares indices.
CLASS_DIFFERENCES = {"glm_moe_dsa": {"mtp_num_layers": 1, "index_topk_freq": 4, "index_skip_offset": 3}}


@pytest.mark.parametrize("model_type,shipped", [("glm_moe_dsa", "glm5"), ("qwen3_next", "qwen3-next-80b-a3b"),
                                                ("gpt_oss", "gpt-oss-120b")])
def test_transformers_class_defaults_are_the_published_models(model_type, shipped):
    """A config class built with no arguments and saved by transformers (not a file written here) counts like
    the shipped config of the model its defaults describe, but for the differences listed."""
    loaded = loaders.load_hf_config(TRANSFORMERS / "class_defaults" / f"{model_type}.json")
    assert NOT_UNDERSTOOD not in loaded.ignored.values()
    diff = CLASS_DIFFERENCES.get(model_type, {})
    assert all(loaded.overrides.get(k, maxflops.SCHEMA[k].default) != v for k, v in diff.items())
    for settings in SETTINGS:
        assert_same_counts({**loaded.overrides, **diff}, shipped, settings)


def test_a_vision_key_of_maxtext_is_reported_as_the_vision_part():
    """The reason for a vision key is a sentence (regression: a rename once made it the mapping's dict of encoders)."""
    from maxflops.loaders.maxtext.mapping import classify

    assert classify("vision_wibble").startswith("not counted: vision")
    assert classify("wibble_for_vit").startswith("not counted: vision")


def test_mimo_v2_flash_class_defaults_are_the_shipped_config():
    """MiMoV2FlashConfig's defaults are MiMo-V2-Flash's: its no-argument config, as transformers saves it, counts as
    configs/mimo-v2-flash.py (twice the KV heads on the sliding layers, narrower values)."""
    loaded = loaders.load_hf_config(FIXTURES / "hf_transformers" / "class_defaults_full" / "mimo_v2_flash.json")
    assert loaded.overrides["num_kv_heads"] == 8 and loaded.overrides["global_num_kv_heads"] == 4
    assert loaded.overrides["value_head_dim"] == 128
    for settings in SETTINGS:
        assert_same_counts(loaded.overrides, "mimo-v2-flash", settings)


def test_nemotron_h_legacy_names_read_as_transformers_reads_them(tmp_path):
    """NemotronHConfig (transformers 5.24) renames the legacy block names 'mamba' and 'attention', and its
    __post_init__ reads mamba_n_groups, mamba_d_conv and mamba_chunk_size in place of n_groups, conv_kernel and
    chunk_size when a file has them (NemotronHConfig(mamba_d_conv=3, conv_kernel=5).conv_kernel is 3); the
    mamba_expand and mamba_dt_* aliases change no FLOPs. A file written that way counts as the modern one."""
    data = json.loads((FIXTURES / "hf" / "nemotron-h-8b.json").read_text())
    legacy = dict(data)
    names = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    legacy["layers_block_type"] = [names[ch] for ch in legacy.pop("hybrid_override_pattern")]
    legacy["mamba_d_conv"], legacy["mamba_n_groups"] = legacy.pop("conv_kernel"), legacy.pop("n_groups")
    legacy.update(mamba_chunk_size=data.get("chunk_size", 128), mamba_expand=2, mamba_dt_min=0.001, mamba_dt_max=0.1,
                  mamba_dt_limit=[0.0, 1e9], mamba_dt_init_floor=1e-4)
    legacy.pop("chunk_size", None)
    (tmp_path / "legacy.json").write_text(json.dumps(legacy))
    (tmp_path / "modern.json").write_text(json.dumps(data))
    a = loaders.load_hf_config(tmp_path / "legacy.json").overrides
    b = loaders.load_hf_config(tmp_path / "modern.json").overrides
    assert maxflops.count(maxflops.model_config(**a)).total == maxflops.count(maxflops.model_config(**b)).total
    both = dict(legacy, conv_kernel=5, mamba_d_conv=3)  # the legacy name wins, as in __post_init__
    (tmp_path / "both.json").write_text(json.dumps(both))
    loaded = loaders.load_hf_config(tmp_path / "both.json")
    assert loaded.overrides["mamba_conv_kernel"] == 3 and "conv_kernel" in loaded.ignored


def test_a_real_key_is_never_offered_another_real_key_as_the_fix(tmp_path):
    """A key another model type reads (mamba_d_head is Bamba's) changes nothing in a Llama file: said, with no
    advice (one real key is no typo of another); a key Llama's code reads and maxflops does not understand is an
    error with no advice either."""
    data = json.loads((FIXTURES / "hf" / "llama3.1-8b.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(dict(data, mamba_d_head=64, activation_dropout=0.1,
                                                          use_sliding_window=False, rotary=True)))
    said = loaders.load_hf_config(tmp_path / "config.json").overrides["not_priced"]
    assert said == ("ignored: the file's mamba_d_head, activation_dropout, use_sliding_window, rotary (no "
                    "transformers llama code reads them)",)
    (tmp_path / "config.json").write_text(json.dumps(dict(data, is_causal=False)))
    with pytest.raises(ValueError, match="'is_causal' = False") as e:
        loaders.load_hf_config(tmp_path / "config.json")
    assert "did you mean" not in str(e.value)


def _nas(tmp_path, blocks, **top):
    data = dict(model_type="nemotron-nas", architectures=["DeciLMForCausalLM"], hidden_size=96, num_attention_heads=8,
                num_hidden_layers=len(blocks), vocab_size=300, hidden_act="silu", intermediate_size=None,
                num_key_value_heads=None, block_configs=blocks, **top)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def _block(group=2, mult=1.0, attn=None, ffn=None):
    return {"attention": {"n_heads_in_group": group, "no_op": group is None, "replace_with_linear": False,
                          **(attn or {})},
            "ffn": {"ffn_mult": mult, "no_op": mult is None, **(ffn or {})}}


def test_llama_nemotron_blocks_are_the_layers_widths(tmp_path):
    """DeciLM's block_configs: the most common KV heads and FFN width are the config's, the others layer_widths;
    a no-op attention or FFN a '-' letter; ffn_mult 1.0 of 96 is int(64) -> 256, 2.5 -> 160 -> 256, 5.25 -> 336 -> 512."""
    blocks = [_block(2, 5.25), _block(None, 1.0), _block(4, 2.5), _block(2, None), _block(2, 5.25)]
    cfg = maxflops.load_config(str(_nas(tmp_path, blocks)))
    assert (cfg.num_kv_heads, cfg.mlp_dim, cfg.attention_layer_pattern, cfg.ffn_layer_pattern) == (4, 512, "G-GGG",
                                                                                                  "FFF-F")
    assert cfg.layer_widths == ("num_kv_heads@2=2", "mlp_dim@1-2=256")


@pytest.mark.parametrize("block, match", [
    (_block(attn={"replace_with_linear": True}), r"layer 0: attention.replace_with_linear=True is not modelled"),
    (_block(attn={"window_length": 128}), r"layer 0: attention.window_length=128 is not modelled"),
    (_block(ffn={"sparsify": ["x"]}), r"layer 0: ffn.sparsify=\['x'\] is not modelled"),
    (_block(3), r"layer 0: attention.n_heads_in_group=3 does not divide num_attention_heads=8"),
    (_block(None, None), r"layer 0: neither attention nor an FFN"),
    (_block(ffn={"hidden_act": "relu"}), r"layer 0: ffn.hidden_act='relu'"),
    (_block(mult=-1), r"layer 0: ffn.ffn_mult=-1 is not a positive number"),
])
def test_llama_nemotron_blocks_maxflops_does_not_model_are_refused_in_one_line(tmp_path, block, match):
    with pytest.raises(ValueError, match=r"key 'block_configs'.*" + match) as e:
        maxflops.load_config(str(_nas(tmp_path, [block, _block()])))
    assert "\n" not in str(e.value)


def test_mamba_d_head_auto_is_the_expanded_width_over_the_heads(tmp_path):
    """granitemoehybrid's mamba_d_head 'auto' (its class default): mamba_expand x hidden_size // mamba_n_heads, as
    GraniteMoeHybridConfig derives it; a file without the key is the file with that value."""
    base = json.loads((FIXTURES / "hf_transformers" / "class_defaults_full" / "granitemoehybrid.json").read_text())
    data = {**base, "hidden_size": 96, "mamba_expand": 2, "mamba_n_heads": 8, "mamba_n_groups": 1,
            "layer_types": ["mamba", "attention"], "num_hidden_layers": 2}
    data.pop("mamba_d_head", None)
    (tmp_path / "auto.json").write_text(json.dumps(data))
    (tmp_path / "given.json").write_text(json.dumps({**data, "mamba_d_head": 2 * 96 // 8}))
    auto = loaders.load_hf_config(tmp_path / "auto.json").overrides
    assert auto["mamba_head_dim"] == 24 and auto == loaders.load_hf_config(tmp_path / "given.json").overrides


def test_gpt_oss_without_layer_types_alternates_from_a_sliding_layer(tmp_path):
    """GptOssConfig's default layer_types: "sliding_attention" if (i + 1) % 2 else "full_attention": layer 0 slides;
    at an odd depth the last layer slides too (35 layers: 18 sliding, 17 full)."""
    base = json.loads((FIXTURES / "hf_transformers" / "class_defaults_full" / "gpt_oss.json").read_text())
    data = {k: v for k, v in base.items() if k != "layer_types"}
    data["num_hidden_layers"] = 35
    (tmp_path / "config.json").write_text(json.dumps(data))
    o = loaders.load_hf_config(tmp_path / "config.json").overrides
    cfg = maxflops.model_config(**o)
    letters = [cfg.attention_layer_pattern[i % len(cfg.attention_layer_pattern)] for i in range(35)]
    assert letters == ["L" if (i + 1) % 2 else "G" for i in range(35)]
    assert letters.count("L") == 18
