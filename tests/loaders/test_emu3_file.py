"""Emu3 as people publish it: the composite ``model_type: "emu3"`` file (Emu3-Chat-hf, Emu3-Gen-hf), from which
transformers builds Emu3ForCausalLM over its text_config. Held to torch through the zoo's emu3 case, which is that model
built from the composite config (tests/fixtures/hf_zoo: forward and training step counted by FlopCounterMode)."""

from __future__ import annotations

import json

import maxflops
from maxflops.loaders import NOT_UNDERSTOOD, load_hf_config
from maxflops.report import text_report
from repo import FIXTURES

ZOO = json.loads((FIXTURES / "hf_zoo" / "cases.json").read_text())["cases"]["emu3"]
# Emu3Config built with no arguments, in full, as transformers 5.24 writes it (its vq_config: the VQ-VAE's defaults)
CLASS = json.loads((FIXTURES / "hf_transformers" / "class_defaults_full" / "emu3.json").read_text())


def _composite(tmp_path, text: dict, **top) -> dict:
    data = {"architectures": ["Emu3ForConditionalGeneration"], "model_type": "emu3", "text_config": text,
            "vq_config": CLASS["vq_config"], "vocabulary_map": {"<image>": 151851, "<|visual token 000000|>": 151854},
            "image_token_id": 151851, "tie_word_embeddings": False, "transformers_version": "4.47.0.dev0", **top}
    (tmp_path / "config.json").write_text(json.dumps(data))
    return data


def _count(tmp_path, mode):
    return maxflops.count(maxflops.load_config(str(tmp_path / "config.json"), mode=mode,
                                               per_device_batch_size=ZOO["batch"], max_target_length=ZOO["length"],
                                               attention_impl="dense"))


def test_the_composite_file_counts_what_torch_ran(tmp_path):
    """The zoo's text model inside a published-shape composite: forward and training step equal torch's."""
    assert ZOO["status"] == "ok" and ZOO["model_class"] == "Emu3ForCausalLM"
    _composite(tmp_path, ZOO["config"])
    loaded = load_hf_config(tmp_path / "config.json")
    assert NOT_UNDERSTOOD not in loaded.ignored.values()
    assert _count(tmp_path, "prefill").hardware_flops == ZOO["total_flops"]
    assert _count(tmp_path, "train").hardware_flops == ZOO["train_flops"]


def test_the_image_tokenizer_is_named_not_priced(tmp_path):
    _composite(tmp_path, ZOO["config"])
    b = _count(tmp_path, "prefill")
    assert b.not_priced == ("model: the image tokenizer (Emu3's VQ-VAE: images to the tokens the decoder reads, and "
                            "back) (vq_config); maxflops counts the text decoder only",)
    assert "NOT COUNTED: the image tokenizer" in text_report(b)


def test_the_class_default_composite_is_its_text_models_defaults():
    """Emu3Config() (a 8B text model and the VQ-VAE) counts as Emu3TextConfig()'s model, the tokenizer named."""
    a = maxflops.count(maxflops.load_config(str(FIXTURES / "hf_transformers" / "class_defaults_full" / "emu3.json")))
    b = maxflops.count(maxflops.load_config(str(FIXTURES / "hf_transformers" / "class_defaults_full" /
                                                "emu3_text_model.json")))
    assert a.total == b.total and a.hardware_flops == b.hardware_flops
    assert a.not_priced and not b.not_priced
