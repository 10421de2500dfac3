"""The Hugging Face loader's house: one module per model type, a registry that lists them, and shared code that
never branches on a type's name."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from maxflops.loaders import hf, load_hf_config
from maxflops.loaders.hf.house import HFType

HOUSE = pathlib.Path(hf.__file__).parent


def test_every_module_is_a_registered_type():
    files = sorted(p.stem for p in (HOUSE / "models").glob("*.py") if not p.stem.startswith("_"))
    assert list(hf.names()) == files
    assert len(hf.model_types()) == len(files)
    for name in hf.model_types():
        t = hf.get(name)
        assert isinstance(t, HFType) and t.name == name and name.replace("-", "_") in files
        if t.wrapper:  # a wrapper's text model is a type of the house, not a wrapper itself
            assert hf.get(t.wrapper) is not None and not hf.get(t.wrapper).wrapper
            assert set(t.defaults) <= {"tie_word_embeddings"} and t.read is None  # (its own key: the head's tie)


@pytest.mark.parametrize("name", ["", "_house", "../x", "qwen2_not_a_type", None, 3])
def test_unknown_names_are_no_type(name):
    assert hf.get(name) is None


def test_shared_code_never_names_a_type():
    """house, parts, ssm, keys and the entry point: a model type's name in a string there is a branch on it.
    nulls.py and transformers_reads.py are data by type, generated from transformers
    (tests/fixtures/hf_nulls/generate.py, tests/fixtures/hf_transformers/generate_reads.py), read by no branch."""
    names = set(hf.model_types()) - {"mamba"}  # also a layer kind of hybrid files ('mamba' blocks), which ssm.py reads
    for path in sorted(p for p in HOUSE.glob("*.py") if p.name not in ("nulls.py", "transformers_reads.py")):
        strings = set(re.findall(r"""["']([a-z0-9_]+)["']""", path.read_text()))
        assert not strings & names, f"{path.name} names {sorted(strings & names)}"


def test_a_file_imports_only_its_own_type(tmp_path):
    import json
    import subprocess
    import sys

    p = tmp_path / "config.json"
    p.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
                             "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100}))
    code = ("import sys; from maxflops.loaders import load_hf_config; load_hf_config(sys.argv[1]); "
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('maxflops.loaders.hf.models.')))")
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['llama']"


def test_a_flat_qwen2_vl_file_reads_as_its_text_config(tmp_path):
    """Qwen2-VL's hub files keep the text model's keys at the top level (Qwen2VLConfig pops them into its text
    config): the same model as the file with a text_config."""
    text = {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3, "num_attention_heads": 4,
            "num_key_value_heads": 2, "vocab_size": 100, "use_sliding_window": False, "max_window_layers": 2}
    towers = {"vision_config": {"depth": 2, "embed_dim": 32}, "image_token_id": 7, "vision_token_id": 8}
    flat, nested = tmp_path / "flat.json", tmp_path / "nested.json"
    flat.write_text(json.dumps({"model_type": "qwen2_vl", **text, **towers}))
    nested.write_text(json.dumps({"model_type": "qwen2_vl", "text_config": {"model_type": "qwen2_vl_text", **text},
                                  **towers}))
    assert load_hf_config(flat).overrides == load_hf_config(nested).overrides
    # a misspelled text key no transformers code reads is still named, with the key it resembles
    flat.write_text(json.dumps({"model_type": "qwen2_vl", **text, "hidden_sise": 3, **towers}))
    said = load_hf_config(flat).overrides["not_priced"]
    assert any("ignored: the file's hidden_sise (did you mean 'hidden_size'?)" in x for x in said)


def test_a_wrapper_lays_its_own_text_defaults_under_the_file(tmp_path):
    """VoxtralConfig builds its text model over its own defaults (Voxtral Mini's widths), not LlamaConfig's: a
    text_config of one key is the model transformers saves from it (tests/fixtures: written by transformers 5.24)."""
    saved = {"model_type": "voxtral", "hidden_size": 3072, "projector_hidden_act": "gelu", "text_config": {
        "head_dim": 128, "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 8192, "model_type": "llama",
        "num_attention_heads": 32, "num_hidden_layers": 2, "num_key_value_heads": 8, "vocab_size": 131072}}
    short, full = tmp_path / "short.json", tmp_path / "full.json"
    short.write_text(json.dumps({"model_type": "voxtral", "text_config": {"num_hidden_layers": 2}}))
    full.write_text(json.dumps(saved))
    assert load_hf_config(short).overrides == load_hf_config(full).overrides
    assert "audio encoder" in load_hf_config(short).overrides["not_priced"][0]
