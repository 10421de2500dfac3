"""A Hugging Face config.json that lacks a key the loader reads counts as transformers would build the model: the
key takes the default of its model type's transformers config class, or the load is refused with a ValueError that
names the key.

The oracle is transformers, not the loader's own table: tests/fixtures/hf_transformers/class_defaults_full/ holds
each class's no-argument config in full (``to_dict``) and ``_classes.json`` what that does not show (the field
defaults ``__post_init__`` replaces, the kwargs it reads with a default, the keys it derives, the attribute maps);
both written by transformers 5.24 (generate.py beside them).
"""

import copy
import json
import re

import pytest

from maxflops import loaders
from maxflops.loaders import hf
from repo import FIXTURES

# the house's types: each wrapper's text model type, each type's class-default table
WRAPPERS = {n: hf.get(n).wrapper for n in hf.model_types() if hf.get(n).wrapper}
DEFAULTS = {n: dict(hf.get(n).defaults) for n in hf.model_types() if hf.get(n).defaults}

FULL = FIXTURES / "hf_transformers" / "class_defaults_full"
CLASSES = json.loads((FULL / "_classes.json").read_text())
ABSENT = object()  # the class has no such key


def full_config(model_type: str) -> dict:
    return json.loads((FULL / f"{model_type}.json").read_text())


def post_init(model_type: str, name: str, get):
    """The value transformers' ``__post_init__`` gives ``name`` (a field whose default is null, or a key it derives),
    from the file's other values (``get``)."""
    if name == "head_dim":
        if model_type in ("deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa"):
            return get("qk_rope_head_dim")  # MLA: head_dim = qk_rope_head_dim
        return get("hidden_size") // get("num_attention_heads")
    if name == "num_key_value_heads":
        return get("num_attention_heads")
    if model_type in ("gemma4_text", "gemma4_unified_text") and name == "per_layer_config":
        # Gemma4TextConfig.__post_init__ (and Gemma4UnifiedTextConfig's): the full layers get head_dim = the global_head_dim kwarg (512), and
        # num_key_value_heads = the num_global_key_value_heads kwarg only with attention_k_eq_v (neither is a field)
        types = get("layer_types") or ["sliding_attention" if (i + 1) % 6 else "full_attention"
                                       for i in range(get("num_hidden_layers"))]
        return {str(i): {"head_dim": 512} for i, t in enumerate(types[:-1] + ["full_attention"])
                if t == "full_attention"}
    if model_type == "dots3_note_text" and name == "per_layer_config":
        # Dots3NoteTextConfig.__post_init__: each sliding layer gets the swa_* kwargs' widths (qk_rope_head_dim:
        # head_dim - qk_nope_head_dim); the layers as its layer_types say
        swa = dict(num_attention_heads=64, num_key_value_heads=64, q_lora_rank=1024, kv_lora_rank=1024, head_dim=256,
                   qk_nope_head_dim=192, v_head_dim=128, qk_rope_head_dim=64)
        return {str(i): dict(swa) for i, t in enumerate(get("layer_types")) if t == "sliding_attention"}
    if model_type == "step3p5" and name == "per_layer_config":
        # Step3p7TextConfig.__post_init__: each sliding layer gets num_sliding_attention_heads (else the legacy
        # attention_other_setting's num_attention_heads, else num_attention_heads)
        other = get("attention_other_setting")
        heads = get("num_sliding_attention_heads") or (other.get("num_attention_heads") if isinstance(other, dict)
                                                        else None) or get("num_attention_heads")
        types = (get("layer_types") or [])[:get("num_hidden_layers")]  # (a list padded with the MTP layers')
        return {str(i): {"num_attention_heads": heads} for i, t in enumerate(types) if t == "sliding_attention"}
    if model_type == "olmo_hybrid" and name in ("linear_num_key_heads", "linear_num_value_heads"):
        return get("num_attention_heads")  # OlmoHybridConfig.__post_init__
    if model_type == "olmo_hybrid" and name == "linear_key_head_dim":
        return int(0.75 * get("hidden_size") / get("linear_num_key_heads"))
    if model_type == "olmo_hybrid" and name == "linear_value_head_dim":
        return 2 * get("linear_key_head_dim")
    if model_type == "bailing_hybrid" and name in ("linear_head_dim", "linear_num_heads", "linear_conv_kernel_dim"):
        # BailingHybridConfig.__post_init__ (before head_dim becomes qk_rope_head_dim; a present kwarg is set after)
        return get({"linear_head_dim": "head_dim", "linear_num_heads": "num_attention_heads",
                    "linear_conv_kernel_dim": "short_conv_kernel_size"}[name])
    if name == "qk_head_dim":
        return get("qk_nope_head_dim") + get("qk_rope_head_dim")
    if model_type in ("mamba", "falcon_mamba") and name == "intermediate_size":
        return get("expand") * get("hidden_size")  # MambaConfig / FalconMambaConfig.__post_init__ (absent only)
    if name == "_sliding_window_pattern":  # Gemma3TextConfig: kwargs.get("sliding_window_pattern", 6)
        return get("sliding_window_pattern")
    if model_type == "gpt_neo" and name == "attention_layers":  # GPTNeoConfig: attention_types expanded
        return [k for kinds, rep in get("attention_types") for _ in range(rep) for k in kinds]
    raise AssertionError(f"{model_type}: no post-init rule written here for {name!r}; read the class and add it")


def class_default(model_type: str, key: str, values: dict):
    """What a ``model_type`` config built from ``values`` (a file's keys, ``key`` not among them) holds for ``key``;
    ABSENT where the class has no such key. A null field default that ``__post_init__`` turns into a per-layer list
    (layer_types, mlp_layer_types, moe_layers, ...) stays null: a file carrying null builds the same config."""
    info = CLASSES[model_type]
    name = info["attribute_map"].get(key, key)

    def get(k):
        return values[k] if values.get(k) is not None else class_default(model_type, k, values)

    if name in info["init"]:
        raw = info["init"][name]
        if raw is None and name in ("head_dim", "num_key_value_heads"):
            return post_init(model_type, name, get)
        return raw
    if key in info["kwargs"]:
        return info["kwargs"][key]
    if name in info["derived"]:
        return post_init(model_type, name, get)
    full = full_config(model_type)
    if name in full:
        return full[name]
    if (model_type, name) in MODELING:
        return MODELING[model_type, name](get)
    return ABSENT


# Keys a class does not have that its modeling code reads with a default: getattr(config, key, default).
MODELING = {
    # Qwen3MoeAttention: getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    ("qwen3_moe", "head_dim"): lambda get: get("hidden_size") // get("num_attention_heads"),
    # FalconH1Attention: getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    ("falcon_h1", "head_dim"): lambda get: get("hidden_size") // get("num_attention_heads"),
    # OlmoHybridAttention: getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    ("olmo_hybrid", "head_dim"): lambda get: get("hidden_size") // get("num_attention_heads"),
    # Glm4MoeAttention: getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    ("glm4_moe", "head_dim"): lambda get: get("hidden_size") // get("num_attention_heads"),
}


# Keys the loader reads that the transformers class does not know (transformers ignores them); absent, the loader
# uses its own rule, written in the type's module beside the read.
LOADER_ONLY = {
    # DeepSeek's own modeling code: MoE iff layer >= first_k_dense_replace and layer % moe_layer_freq == 0 (absent: 1)
    ("deepseek_v2", "moe_layer_freq"), ("deepseek_v3", "moe_layer_freq"), ("deepseek_v32", "moe_layer_freq"),
    ("glm_moe_dsa", "moe_layer_freq"),
    # the checkpoint's MTP modules (transformers builds none): absent, none
    ("deepseek_v32", "num_nextn_predict_layers"), ("glm_moe_dsa", "num_nextn_predict_layers"),
    ("kimi_linear", "num_nextn_predict_layers"),
    # MiniMax-M2's own MTP keys (MiniMaxM2Config has none; transformers builds no MTP module): absent, no MTP
    ("minimax_m2", "use_mtp"), ("minimax_m2", "num_mtp_modules"), ("minimax_m2", "mtp_transformer_layers"),
    # gpt-oss's own name of num_experts_per_tok: checked against it when present
    ("gpt_oss", "experts_per_token"),
    # DeepSeek-V4's checkpoint format: per-layer compress ratios (a legacy kwarg DeepseekV4Config pops)
    ("deepseek_v4", "compress_ratios"),
    # NemotronH's legacy layer string (a kwarg NemotronHConfig pops): absent, layers_block_type (or its default list)
    ("nemotron_h", "hybrid_override_pattern"),
}


def fixture_files():
    files = sorted((FIXTURES / "hf").glob("*.json")) + sorted((FIXTURES / "hf_transformers").glob("*.json"))
    files += sorted(FULL.glob("[!_]*.json"))
    return [p for p in files if "model_type" in json.loads(p.read_text())]


def read_keys(path):
    """(model type, text_config or None, key) for each key the loader reads (not in Loaded.ignored) of ``path``."""
    data = json.loads(path.read_text())
    try:
        loaded = loaders.load_hf_config(path)
    except ValueError:
        return []  # a class default no model runs (UNLOADABLE)
    model_type = data["model_type"]
    out = [(model_type, None, k) for k in data if k not in loaded.ignored]
    if model_type in WRAPPERS:
        inner = WRAPPERS[model_type]
        out += [(inner, "text_config", k) for k in data["text_config"] if f"text_config.{k}" not in loaded.ignored]
    return out


CASES = [pytest.param(path, *case, id=f"{path.parent.name}/{path.stem}:{case[1] + '.' if case[1] else ''}{case[2]}")
         for path in fixture_files() for case in read_keys(path)]


def load(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    try:
        return loaders.load_hf_config(p), None
    except ValueError as e:
        return None, str(e)


def names(message: str, key: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(key)}(?!\w)", message) is not None


@pytest.mark.parametrize("path, model_type, section, key", CASES)
def test_an_absent_key_takes_the_class_default_or_is_refused(tmp_path, path, model_type, section, key):
    data = json.loads(path.read_text())
    values = data[section] if section else data
    assert key in values
    deleted = copy.deepcopy(data)
    (deleted[section] if section else deleted).pop(key)
    got, err = load(tmp_path, "deleted.json", deleted)

    default = class_default(model_type, key, {k: v for k, v in values.items() if k != key})
    if section and key in hf.get(data["model_type"]).text_defaults:  # the wrapper's own text defaults (Voxtral)
        default = hf.get(data["model_type"]).text_defaults[key]
    if default is ABSENT:
        assert (model_type, key) in LOADER_ONLY, f"{model_type} has no {key!r}: say in LOADER_ONLY what the loader does"
        return
    reference = copy.deepcopy(data)
    (reference[section] if section else reference)[key] = default
    want, ref_err = load(tmp_path, "reference.json", reference)

    if err is not None:  # refused: the error names the key (or the class default is refused as well)
        assert names(err, key) or ref_err is not None, f"refused without naming {key!r}: {err}"
        return
    assert ref_err is None, f"without {key!r} the file loads, with the class default {default!r} it is refused: {ref_err}"
    assert got.overrides == want.overrides, f"without {key!r}: not the class default {default!r}"
    # Loaded.defaults reports it (under the name read: Qwen3-MoE reads num_experts for num_local_experts), but for
    # the per-layer lists derived from other keys and the few switches read with an inline default
    aliases = [a for a, b in CLASSES[model_type]["attribute_map"].items() if b == key]
    reported = [f"{section}.{k}" if section else k for k in [key, *aliases]]
    reported = [got.defaults[k] for k in reported if k in got.defaults]
    if key in UNREPORTED:
        assert reported in ([], [default])
    elif default is not None:  # (null: derived from other keys; the loader may say what it derived)
        assert reported == [default], f"absent {key!r}: Loaded.defaults does not report {default!r}"


# Absent keys read with an inline default that Loaded.defaults does not list (record=False in the type's module): the class's
# switches whose default changes nothing (one MoE step, no index sharing) and the wrapper's text_config.model_type.
UNREPORTED = {"decoder_sparse_step", "index_topk_freq", "index_skip_topk_offset", "model_type",
              "text_config"}  # (a flat wrapper without text_config reads its text keys, each reported, at the top)


def test_deepseek_shared_experts_default_per_class(tmp_path):
    """The reported bug: DeepseekV2Config has 2 shared experts, DeepseekV3Config and DeepseekV32Config 1."""
    for fixture, model_type, want in (("deepseek2-16b", "deepseek_v2", 2), ("deepseek3-671b", "deepseek_v3", 1),
                                      ("deepseek3.2-671b", "deepseek_v32", 1)):
        data = json.loads((FIXTURES / "hf" / f"{fixture}.json").read_text())
        assert data["model_type"] == model_type
        assert full_config(model_type)["n_shared_experts"] == want
        del data["n_shared_experts"]
        loaded, err = load(tmp_path, f"{fixture}.json", data)
        assert err is None, err
        assert loaded.overrides["shared_experts"] == want
        assert loaded.defaults["n_shared_experts"] == want


def test_the_classes_are_the_loaders_model_types():
    versions = json.loads((FIXTURES / "hf_transformers" / "versions.json").read_text())
    assert versions["transformers"] == "5.24.0"
    assert set(CLASSES) | set(versions["no_class"]) == set(hf.HF_MODEL_TYPES)
    for model_type in versions["no_class"]:  # no class default stands in for a missing key: every key is required
        assert not hf.get(model_type).defaults, model_type


@pytest.mark.parametrize("model_type", sorted(DEFAULTS))
def test_loader_defaults_are_the_class_defaults(model_type):
    """Each entry of the loader's table is its class's default (a field null by default that __post_init__
    derives from other keys has no fixed default, so no entry)."""
    assert model_type in CLASSES
    info = CLASSES[model_type]
    for key, value in DEFAULTS[model_type].items():
        name = info["attribute_map"].get(key, key)
        assert not (name in info["init"] and info["init"][name] is None), \
            f"{model_type}.{key}: __post_init__ derives it; a fixed default is wrong for other sizes"
        assert name not in info["derived"], f"{model_type}.{key}: __post_init__ derives it"
        want = class_default(model_type, key, {})
        assert want is not ABSENT, f"{model_type} has no {key!r}"
        assert value == want, f"{model_type}.{key}: loader {value!r}, {info['class']} {want!r}"


# Read with a default written inline in the type's module (each the class default, checked by the absent-key test above).
INLINE = {"decoder_sparse_step", "mlp_only_layers", "model_type", "moe_layers", "no_rope_layers", "layer_types",
          "mlp_layer_types", "indexer_types", "compress_rates"}


@pytest.mark.parametrize("model_type", sorted(set(CLASSES) - set(WRAPPERS)))
def test_every_class_default_the_loader_reads_is_in_its_table(tmp_path, model_type):
    """A size the loader reads from a class's own config is in the loader's table (the absent-key test cannot see a
    missing entry where a post-init rule happens to give the same number, e.g. head_dim = hidden / heads), or its
    absence is refused, naming it."""
    info, data = CLASSES[model_type], full_config(model_type)
    data.update(UNLOADABLE.get(model_type, (None, {}))[1])  # a class default no model runs: give it one that loads
    p = tmp_path / "class.json"
    p.write_text(json.dumps(data))
    loaded = loaders.load_hf_config(p)
    table = DEFAULTS.get(model_type, {})
    for key in data:
        name = info["attribute_map"].get(key, key)
        if key in loaded.ignored or key in INLINE or data[key] is None:
            continue
        if name in info["init"] or name in info["derived"] or key in info["kwargs"]:
            continue  # __post_init__ decides: the absent-key test checks the loader's rule
        names_in_table = {key} | {a for a, b in info["attribute_map"].items() if b == key}  # Qwen3-MoE: num_experts
        if any(table.get(k, ABSENT) == data[key] for k in names_in_table):
            continue
        deleted = {k: v for k, v in data.items() if k != key}
        _, err = load(tmp_path, "deleted.json", deleted)
        assert err is not None and names(err, key), \
            f"{model_type}.{key}: absent, the loader uses no table entry ({info['class']}: {data[key]!r}) nor refuses"


# Config classes whose no-argument config no model runs: (the key the refusal names, values that load, why).
_QSA = {"indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": 64, "indexer_budget": 512,
        "indexer_compress_ratio": 64}
UNLOADABLE = {
    "qwen4_exp_text": ("indexer_n_heads", _QSA, "Qwen4ExpTextConfig() leaves the QSA indexer's fields null while its "
                                                "layers default to indexed_attention every fourth (transformers "
                                                "cannot build the indexer)"),
    "qwen4_exp": ("indexer_n_heads", {"text_config": {**json.loads((FULL / "qwen4_exp.json").read_text())["text_config"],
                                                      **_QSA}},
                  "Qwen4ExpConfig()'s text model leaves the QSA indexer's fields null (as Qwen4ExpTextConfig())"),
    "deepseek_v2": ("num_experts_per_tok", {"num_experts_per_tok": 6},
                    "DeepseekV2Config() leaves num_experts_per_tok null (its MoE top-k would fail)"),
    "dots1": ("n_routed_experts", {"n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1},
              "Dots1Config() leaves the expert counts null (transformers cannot build its experts)"),
    "lfm2_moe": ("layer_types", {"layer_types": ["conv", "conv", "full_attention"] * 10 + ["conv", "conv"]},
                 "Lfm2MoeConfig() leaves layer_types null, which its decoder layers index (transformers cannot build "
                 "it)"),
    "reformer": ("is_decoder", {"is_decoder": True},
                 "ReformerConfig() has is_decoder false: ReformerModelWithLMHead refuses it (the config of "
                 "ReformerForMaskedLM's bidirectional encoder)"),
    "hunyuan_v1_moe": ("num_experts", {"num_experts": 4},
                       "HunYuanMoEV1Config() has one expert: its router runs beside it, and maxflops has no "
                       "one-expert MoE (num_experts 1 is no MoE)"),
}


@pytest.mark.parametrize("model_type", sorted(UNLOADABLE))
def test_class_defaults_that_do_not_load(model_type):
    """Refused, naming the key (each is a type of the house with a recorded class)."""
    assert model_type in CLASSES
    with pytest.raises(ValueError, match=UNLOADABLE[model_type][0]):
        loaders.load_hf_config(FULL / f"{model_type}.json")


def test_every_other_class_default_loads():
    for model_type in sorted(set(CLASSES) - set(UNLOADABLE)):
        loaders.load_hf_config(FULL / f"{model_type}.json")


@pytest.mark.parametrize("model_type", sorted(t for t in WRAPPERS if hf.get(t).text_defaults))
def test_a_wrappers_text_defaults_are_its_class_defaults(model_type):
    """A wrapper's own text defaults (HFType.text_defaults) are what its class builds its text model with."""
    text = full_config(model_type)["text_config"]
    for key, value in hf.get(model_type).text_defaults.items():
        assert text[key] == value, (model_type, key)
