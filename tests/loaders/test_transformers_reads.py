"""The rule for a key no reader takes, generated from transformers' own source (maxflops/loaders/hf/transformers_reads.py,
written by tests/fixtures/hf_transformers/generate_reads.py): a key no code of its model type reads is accepted and
said; one the code reads and maxflops does not understand stays an error naming it."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

import maxflops
from maxflops.loaders import NOT_UNDERSTOOD, hf, load_hf_config
from maxflops.loaders.hf import transformers_reads, unread_keys
from maxflops.report import text_report
from repo import ROOT

HF_REAL = ROOT.parent / "shared" / "hf-real"
CLASS_DEFAULTS = ROOT / "tests" / "fixtures" / "hf_transformers" / "class_defaults_full"

# Keys a loader takes that no transformers code of the type reads, each with its reason: the checkpoint's authors'
# own keys for what their code runs and transformers' model leaves out or fixes (MTP modules, the MoE layer rule, the
# output gate), decode bytes, or a key read only to refuse a value transformers cannot run. The test below finds any
# other: a key the loader would count by that transformers never reads.
BEYOND_TRANSFORMERS = {
    "num_nextn_predict_layers": "the MTP modules the checkpoint ships (transformers' model builds none)",
    "mtp_num_hidden_layers": "Qwen3.5's MTP modules (transformers' model builds none)",
    "num_mtp_modules": "MiniMax's MTP modules (transformers' model builds none)",
    "mtp_transformer_layers": "MiniMax's MTP modules' layers (transformers' model builds none)",
    "moe_layer_freq": "DeepSeek's reference rule for the MoE layers (1 in every published file, as transformers has it)",
    "hybrid_layer_pattern": "MiMo-V2-Flash's own per-layer list (checked against the layer types transformers reads)",
    "attn_output_gate": "Qwen's gate switch (true in every published file, as transformers builds it)",
    "mlp_only_layers": "Qwen's dense layers (empty in every published file of these types)",
    "expert_intermediate_size": "Gemma 4's expert width under the name of Google's earlier revision",
    "mamba_ssm_dtype": "the recurrent state's bytes (decode traffic, no FLOPs)",
    "mamba_ssm_cache_dtype": "the recurrent state's bytes (decode traffic, no FLOPs)",
    "expansion_ratio": "read only to refuse a ratio other than 4: transformers' MptMLP is 4 x d_model",
}


def _files():
    out = [(p.stem, p) for p in sorted(CLASS_DEFAULTS.glob("*.json")) if not p.name.startswith("_")]
    if HF_REAL.is_dir():
        for p in sorted(HF_REAL.glob("*/config.json")):
            out.append((json.loads(p.read_text()).get("model_type"), p))
    return out


def test_every_key_a_loader_takes_is_one_transformers_reads():
    """Held the other way round: a key the loader counts by and transformers never reads would price what
    transformers does not run (each class's defaults in full, and every published file of ../shared/hf-real where it
    is present). The generated rule misses no key a loader needs."""
    checked, wrong = 0, {}
    for model_type, path in _files():
        t = hf.get(model_type)
        if t is None or unread_keys.reads(model_type) is None:
            continue
        try:
            loaded = load_hf_config(path, unknown="report")
        except ValueError:  # a class whose defaults are no model transformers runs (test_hf_defaults.py's list)
            assert path.parent == CLASS_DEFAULTS, path
            continue
        data = json.loads(path.read_text())
        levels = [("", data, model_type)]
        if isinstance(data.get("text_config"), dict):
            levels.append(("text_config.", data["text_config"], data["text_config"].get("model_type") or t.wrapper))
        for prefix, level, level_type in levels:
            if unread_keys.reads(level_type) is None:
                continue
            for key in level:
                if key in ("model_type", "text_config") or prefix + key in loaded.ignored:
                    continue
                checked += 1
                if key not in unread_keys.reads(level_type) and key not in BEYOND_TRANSFORMERS:
                    wrong.setdefault(path.name if path.parent == CLASS_DEFAULTS else path.parent.name, []).append(
                        prefix + key)
    assert not wrong
    assert checked > 3000


def test_each_key_read_beyond_transformers_is_beyond_it_somewhere():
    """The list above holds no key every type's transformers code reads (a stale entry)."""
    for key in BEYOND_TRANSFORMERS:
        assert any(key not in unread_keys.reads(t) for t in transformers_reads.TYPES), key


# Published files of read types that used to be refused for keys no transformers code reads (the list),
# written as their hubs publish them
GPT2 = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
        "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
        "summary_use_proj": True, "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": 50257}
OPT_125M = {"_name_or_path": "opt-125m", "activation_dropout": 0.0, "activation_function": "relu",
            "architectures": ["OPTForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 2,
            "do_layer_norm_before": True, "dropout": 0.1, "eos_token_id": 2, "ffn_dim": 3072, "hidden_size": 768,
            "init_std": 0.02, "layerdrop": 0.0, "max_position_embeddings": 2048, "model_type": "opt",
            "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1, "prefix": "</s>",
            "torch_dtype": "float16", "transformers_version": "4.21.0.dev0", "use_cache": True, "vocab_size": 50272,
            "word_embed_proj_dim": 768}
GPTJ_6B = {"activation_function": "gelu_new", "architectures": ["GPTJForCausalLM"], "attn_pdrop": 0.0,
           "bos_token_id": 50256, "embd_pdrop": 0.0, "eos_token_id": 50256, "gradient_checkpointing": False,
           "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gptj", "n_embd": 4096,
           "n_head": 16, "n_inner": None, "n_layer": 28, "n_positions": 2048, "resid_pdrop": 0.0, "rotary": True,
           "rotary_dim": 64, "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.1,
           "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
           "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50, "temperature": 1.0}},
           "tie_word_embeddings": False, "tokenizer_class": "GPT2Tokenizer", "transformers_version": "4.18.0.dev0",
           "use_cache": True, "vocab_size": 50400}
GPT_NEO_125M = {"activation_function": "gelu_new", "architectures": ["GPTNeoForCausalLM"], "attention_dropout": 0,
                "attention_layers": ["global", "local"] * 6, "attention_types": [[["global", "local"], 6]],
                "bos_token_id": 50256, "embed_dropout": 0, "eos_token_id": 50256, "gradient_checkpointing": False,
                "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": None, "layer_norm_epsilon": 1e-05,
                "max_position_embeddings": 2048, "model_type": "gpt_neo", "num_heads": 12, "num_layers": 12,
                "resid_dropout": 0, "summary_activation": None, "summary_first_dropout": 0.1,
                "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
                "transformers_version": "4.9.0.dev0", "use_cache": True, "vocab_size": 50257, "window_size": 256}
QWEN3_NEXT = json.loads((ROOT / "tests" / "fixtures" / "hf" / "qwen3-next-80b-a3b.json").read_text())

PUBLISHED = {"gpt2": GPT2, "opt-125m": OPT_125M, "gpt-j-6b": GPTJ_6B, "gpt-neo-125m": GPT_NEO_125M,
             "qwen3-next-80b-a3b": {**QWEN3_NEXT, "use_sliding_window": False}}
# what each file carries that no transformers code of its type reads
UNREAD = {"gpt2": ["n_ctx"], "opt-125m": ["activation_dropout"],
          "gpt-j-6b": ["rotary", "scale_attn_weights", "summary_activation", "summary_first_dropout",
                       "summary_proj_to_labels", "summary_type", "summary_use_proj"],
          "gpt-neo-125m": ["summary_activation", "summary_first_dropout", "summary_proj_to_labels", "summary_type",
                           "summary_use_proj"],
          "qwen3-next-80b-a3b": ["use_sliding_window"]}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_files_load_counting_what_transformers_counts(tmp_path, name):
    """Each loads; each key no code of its type reads is said (in the report's IGNORED line) and changes nothing:
    the count equals that of the file without them."""
    data = PUBLISHED[name]
    path = tmp_path / name / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    loaded = load_hf_config(path)
    said = sorted(k for k, why in loaded.ignored.items() if why == unread_keys.UNREAD)
    assert [k for k in said if k in UNREAD[name]] == sorted(UNREAD[name])
    for key in UNREAD[name]:  # the rule, not a list kept by hand, makes each harmless
        assert key not in unread_keys.reads(data["model_type"])
    line = next(x for x in loaded.overrides["not_priced"] if x.startswith("ignored: "))
    assert all(k in line for k in UNREAD[name])
    bare = tmp_path / "bare" / "config.json"
    bare.parent.mkdir()
    bare.write_text(json.dumps({k: v for k, v in data.items() if k not in said}))
    assert maxflops.count(maxflops.load_config(str(path))).total == \
        maxflops.count(maxflops.load_config(str(bare))).total
    assert "IGNORED: the file's " in text_report(maxflops.count(maxflops.load_config(str(path))))


def test_gradient_checkpointing_is_read_and_priced_only_when_off(tmp_path):
    """PreTrainedModel turns a true gradient_checkpointing into activation checkpointing of every layer (hardware
    FLOPs in training): read by transformers, so a true value is refused naming it; false changes nothing."""
    assert "gradient_checkpointing" in unread_keys.reads("gptj")
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GPTJ_6B, "gradient_checkpointing": True}))
    with pytest.raises(ValueError, match="'gradient_checkpointing' = True: not modelled"):
        load_hf_config(path)


def test_a_key_the_type_reads_and_maxflops_does_not_understand_stays_an_error(tmp_path):
    """is_causal is read by the masks (false: bidirectional attention); a Llama file with it is refused naming it,
    with no 'did you mean' (it is a real key, not a typo)."""
    data = json.loads((ROOT / "tests" / "fixtures" / "hf" / "llama3.1-8b.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "is_causal": False}))
    with pytest.raises(ValueError, match=r"key not understood: 'is_causal' = False\. ") as e:
        load_hf_config(path)
    assert "did you mean" not in str(e.value)
    assert load_hf_config(path, unknown="report").ignored["is_causal"] == NOT_UNDERSTOOD


def test_the_generated_rule_covers_the_house():
    """Every type the house reads has a rule, except the remote-code types transformers has no config class for
    (whose unknown keys stay errors); the rule is transformers 5.24.0's."""
    assert transformers_reads.TRANSFORMERS == "5.24.0"
    assert set(transformers_reads.TYPES) | set(transformers_reads.NO_CLASS) == set(hf.model_types())
    assert not set(transformers_reads.TYPES) & set(transformers_reads.NO_CLASS)
    assert unread_keys.reads(transformers_reads.NO_CLASS[0]) is None


def test_a_remote_code_type_still_refuses_a_key_it_does_not_know(tmp_path):
    nas = {"model_type": "nemotron-nas", "architectures": ["DeciLMForCausalLM"], "hidden_size": 96,
           "num_attention_heads": 8, "num_hidden_layers": 1, "vocab_size": 300, "hidden_act": "silu",
           "intermediate_size": None, "num_key_value_heads": None, "frobnicate": 3,
           "block_configs": [{"attention": {"n_heads_in_group": 2, "no_op": False, "replace_with_linear": False},
                              "ffn": {"ffn_mult": 1.0, "no_op": False, "replace_with_linear": False}}]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(nas))
    with pytest.raises(ValueError, match="'frobnicate' = 3"):
        load_hf_config(path)


def test_live_the_committed_rule_is_what_the_generator_writes(tmp_path):
    """Opt-in (CI's MaxText leg has transformers 5.24.0 in its venv): run the generator against transformers
    itself and compare."""
    python = os.environ.get("MAXFLOPS_LIVE_MAXTEXT")
    if not python:
        pytest.skip("set MAXFLOPS_LIVE_MAXTEXT to a Python with transformers 5.24.0 (CI's MaxText leg does)")
    out = tmp_path / "transformers_reads.py"
    subprocess.run([python, str(ROOT / "tests" / "fixtures" / "hf_transformers" / "generate_reads.py"), str(out)],
                   check=True, capture_output=True, text=True, timeout=600)
    assert out.read_text() == (pathlib.Path(transformers_reads.__file__)).read_text()


@pytest.mark.parametrize("name,vocab", [("gemma3-27b", 262208), ("llama4-17b-128e", 202048)])
def test_a_wrappers_top_level_copy_of_a_text_key_changes_nothing(tmp_path, name, vocab):
    """A multimodal file that repeats its text model's vocab_size at the top level (the text model is built from
    text_config; Gemma 3's file leaves it to the class default): accepted when equal, an error naming it when not."""
    data = json.loads((ROOT / "tests" / "fixtures" / "hf" / f"{name}.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**data, "vocab_size": vocab}))
    loaded = load_hf_config(path)
    assert loaded.ignored["vocab_size"].startswith("no FLOPs effect: the text_config's own value")
    assert loaded.overrides == load_hf_config(ROOT / "tests" / "fixtures" / "hf" / f"{name}.json").overrides
    path.write_text(json.dumps({**data, "vocab_size": vocab + 1}))
    with pytest.raises(ValueError, match=f"'vocab_size' = {vocab + 1}"):
        load_hf_config(path)
