"""The files people publish: every real config.json of ../shared/hf-real whose model type the house reads loads as
its authors wrote it (the keys training frameworks, quantizers and the hub add included), and counts its published
parameter size within the published figure's own rounding; a file of a type the house does not read is refused in one
line naming it.

The corpus is read in place (CI has ../shared beside the clone); where it is absent these tests skip, saying so.
"""

from __future__ import annotations

import json
import math

import pytest
from shapes import parameter_count

import maxflops
from maxflops.config import validate
from maxflops.loaders import hf, load_hf_config
from repo import ROOT

HF_REAL = ROOT.parent / "shared" / "hf-real"
SOURCES = json.loads((HF_REAL / "SOURCES.json").read_text()) if HF_REAL.is_dir() else {}
CLASS_DEFAULTS = ROOT / "tests" / "fixtures" / "hf_transformers" / "class_defaults_full"
needs_corpus = pytest.mark.skipif(not HF_REAL.is_dir(), reason="../shared/hf-real (real published config.json "
                                                                "files) is absent")

READ = sorted(n for n, s in SOURCES.items() if hf.get(s["model_type"]))
NOT_READ = sorted(set(SOURCES) - set(READ))

# Files of a read type that the house refuses, with the key the refusal names: a form maxflops lacks.
REFUSED: dict = {}

# Published figures that count more than the text decoder maxflops counts, with the reason; the count is held below
# the figure, and at the text decoder's size where it is known.
NOT_THE_TEXT_DECODER = {
    "llama-4-scout-17b-16e-instruct": "Meta's 109B includes the vision encoder and its projector",
    "qwen3-vl-2b-instruct": "Qwen's 2B class includes the vision encoder (the text decoder is 1.72B)",
    "kimi-linear-48b-a3b": "the model's name: its config's weights count 49.12B (see tests/core/test_models.py)",
}
# DeepSeek-V3.2 is published with V3's 671B: its indexers' weights are not in that figure.
WITHOUT_INDEXER = {"deepseek_v32"}


def significant(text: str) -> float:
    """Half a unit of the published figure's last significant digit, relative (an integer's trailing zeros are not
    significant, but at least two digits are: '400' is 4.0e2), plus 0.002% for norms and biases no matmul counts."""
    digits = text.replace(".", "").lstrip("0")
    if "." not in text:
        digits = digits.rstrip("0") or "0"
    sig = max(len(digits), 2)
    value = float(text)
    unit = 10 ** (math.floor(math.log10(value)) - sig + 1)
    return unit / 2 / value + 2e-5


def _tied(name: str, model_type: str) -> bool:
    data = json.loads((HF_REAL / name / "config.json").read_text())
    for where in (data.get("text_config") or {}, data):
        if "tie_word_embeddings" in where:
            return bool(where["tie_word_embeddings"])
    t = hf.get(model_type)
    default = json.loads((CLASS_DEFAULTS / f"{t.wrapper or model_type}.json").read_text())
    return bool(default.get("tie_word_embeddings", False))


@needs_corpus
@pytest.mark.parametrize("name", READ)
def test_a_published_file_of_a_read_type_loads_as_published(name):
    path = HF_REAL / name / "config.json"
    if name in REFUSED:
        with pytest.raises(ValueError, match=REFUSED[name]):
            load_hf_config(path)
        return
    loaded = load_hf_config(path)
    maxflops.count(maxflops.model_config(**loaded.overrides))


@needs_corpus
@pytest.mark.parametrize("name", [n for n in READ if SOURCES[n].get("published_b") and n not in REFUSED])
def test_a_published_file_counts_its_published_size(name):
    source = SOURCES[name]
    model_type = source["model_type"]
    inner = hf.get(model_type).wrapper or model_type
    c = validate(maxflops.model_config(**load_hf_config(HF_REAL / name / "config.json").overrides))
    total = parameter_count(c, _tied(name, model_type), inner not in WITHOUT_INDEXER)
    published = float(source["published_b"]) * 1e9
    if name in NOT_THE_TEXT_DECODER:
        assert total < published or name == "kimi-linear-48b-a3b", f"{name}: {total / 1e9:.3f}B"
        return
    assert abs(total - published) / published < significant(str(source["published_b"])), f"{total / 1e9:.3f}B"


@needs_corpus
@pytest.mark.parametrize("name", NOT_READ)
def test_a_published_file_of_another_type_is_refused_by_name(name):
    with pytest.raises(ValueError) as e:
        load_hf_config(HF_REAL / name / "config.json")
    assert "\n" not in str(e.value) and "'model_type'" in str(e.value)


def test_the_significant_figures():
    assert significant("400") == pytest.approx(5 / 400 + 2e-5)
    assert significant("744") == pytest.approx(0.5 / 744 + 2e-5)
    assert significant("7.27") == pytest.approx(0.005 / 7.27 + 2e-5)
    assert significant("52") == pytest.approx(0.5 / 52 + 2e-5)


@needs_corpus
def test_llama_nemotron_super_counts_its_blocks_as_deci_builds_them():
    """Llama-3.3-Nemotron-Super-49B (nemotron-nas, DeciLM's remote code): its 80 blocks, read straight from the file
    here as DeciLM builds them (an attention block of num_attention_heads // n_heads_in_group KV heads unless no_op;
    a gated MLP of ffn_mult -> int(2 * ffn_mult * hidden / 3) raised to a multiple of 256 unless no_op), give its
    weights (49.87B: the name's 49B) and, times 6 per token, the training step's weight FLOPs."""
    data = json.loads((HF_REAL / "llama-3_3-nemotron-super-49b-v1" / "config.json").read_text())
    D, H, V = data["hidden_size"], data["num_attention_heads"], data["vocab_size"]
    hd = D // H
    weights = 2 * V * D  # the embedding and an untied head
    layer_matmuls = []
    for block in data["block_configs"]:
        w = 0
        if not block["attention"]["no_op"]:
            kv = H // block["attention"]["n_heads_in_group"]
            w += 2 * D * H * hd + 2 * D * kv * hd
        if not block["ffn"]["no_op"]:
            width = int(2 * block["ffn"]["ffn_mult"] * D / 3)
            width += -width % 256
            w += 3 * D * width
        layer_matmuls.append(w)
        weights += w
    assert len(layer_matmuls) == data["num_hidden_layers"] == 80
    cfg = maxflops.load_config(str(HF_REAL / "llama-3_3-nemotron-super-49b-v1" / "config.json"))
    assert parameter_count(validate(cfg), _tied("llama-3_3-nemotron-super-49b-v1", "nemotron-nas")) == weights
    assert weights == 49_866_080_256
    b = maxflops.count(cfg)
    assert b.learnable_weight == 6 * b.tokens * (sum(layer_matmuls) + V * D)
    assert [r.widths.get("mlp_dim", cfg.mlp_dim) if r.ffn != "none" else 0 for r in b.layers[:-1]] == [
        (lambda w: w + -w % 256)(int(2 * blk["ffn"]["ffn_mult"] * D / 3)) if not blk["ffn"]["no_op"] else 0
        for blk in data["block_configs"]]


# Where the product's count departs from the published figure (held at its own, the cause stated):
# - GLM-5.2 (indexer_types with 'shared' layers): transformers' GlmMoeDsa builds no indexer on the layers that reuse
#   another's top-k; maxflops counts as it builds (tests/loaders/test_hf_params.py), 0.6B under Z.ai's 744B;
# - Falcon-Mamba-7B: its A_log, D and conv kernels, which no matmul reads and maxflops does not count (0.15%).
PRODUCT = {"glm-5.2": "743.4", "glm-5.2-fp8": "743.4", "glm-5.2-nvfp4": "743.4", "falcon-mamba-7b": "7.26"}


@needs_corpus
@pytest.mark.parametrize("name", [n for n in READ if SOURCES[n].get("published_b") and n not in REFUSED
                                  and n not in NOT_THE_TEXT_DECODER])
def test_the_products_parameter_count_is_the_published_size(name):
    """maxflops.parameters (matmul weights and tables; the head tied as the loader reads the file) within the published
    figure's rounding; the loader's tie is the file's, else its config class's default."""
    model_type = SOURCES[name]["model_type"]
    overrides = load_hf_config(HF_REAL / name / "config.json").overrides
    p = maxflops.parameters(maxflops.model_config(**overrides), mtp_num_layers=0)
    assert p.tied == _tied(name, model_type) or not hf.get(hf.get(model_type).wrapper or model_type).ties
    inner = hf.get(model_type).wrapper or model_type
    total = p.total - (sum(p.components.get(k, 0) for k in ("indexer_proj", "indexer_proj_attn"))
                       if inner in WITHOUT_INDEXER else 0)
    text = PRODUCT.get(name, str(SOURCES[name]["published_b"]))
    assert abs(total - float(text) * 1e9) / (float(text) * 1e9) < significant(text), f"{total / 1e9:.3f}B"
