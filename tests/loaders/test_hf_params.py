"""The parameter count (``maxflops.parameters``) against transformers' own models and against published sizes.

- transformers' own models (tests/fixtures/hf_zoo/params.json, made by the script beside it under torch 2.13 and
  transformers 5.24): each parameter of each zoo type sorted by the ops a forward pass reads it with; maxflops'
  total equals the parameters read as a factor of a matrix product plus the tables read by a lookup, for every type
  the house reads, but those whose difference is stated below with its cause (each asserted at its exact value);
- the head tied or not as transformers ties it (the loaders read ``tie_word_embeddings`` where the model class does,
  at its class default, and MaxText's ``logits_via_embedding``);
- the shipped configs' and the published files' sizes within each published figure's own rounding
  (tests/core/test_models.py's table and ../shared/hf-real's SOURCES.json).
"""

from __future__ import annotations

import json

import pytest
from test_hf_zoo import CASES, READ

import maxflops
from maxflops.loaders import load_hf_config
from repo import ROOT

PARAMS = json.loads((ROOT / "tests" / "fixtures" / "hf_zoo" / "params.json").read_text())


def _loaded(name, tmp_path, **more):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CASES[name]["config"]))
    o = load_hf_config(path).overrides
    return maxflops.model_config(**{**o, "mtp_num_layers": 0, **more})  # (transformers builds no MTP module)


def _embedders(name) -> int:
    """Gemma3nModel's vision and audio embedders' projections (tower width -> D), read by a matmul on text."""
    cfg = CASES[name]["config"]
    return cfg["text_config"]["hidden_size"] * (cfg["vision_config"]["hidden_size"] + cfg["audio_config"]["hidden_size"])


def _tables(name, *parts) -> int:
    return sum(v for k, v in PARAMS["params"][name]["embedding"].items() if any(p in k for p in parts))


def _zamba_projections(name) -> int:
    """Every layer's ZambaMambaMixer: x_proj inner -> dt_rank + 2 state and dt_proj dt_rank -> inner (inner = expand x
    hidden), over its heads."""
    cfg = CASES[name]["config"]
    inner, r, n = cfg["mamba_expand"] * cfg["hidden_size"], cfg["mamba_dt_rank"], cfg["mamba_d_state"]
    return cfg["num_hidden_layers"] * inner * (r + 2 * n + r)


def _cpmant_lookups(name) -> int:
    """CpmAntModel's lookup tables beyond the token rows: input_embedding's prompt_types x prompt_length prompt rows
    (after its vocab_size token rows), segment_embedding (segment_types x hidden_size) and
    CpmAntSegmentPositionEmbedding's relative_attention_bias (segment_types^2 + position_bias_num_buckets rows of
    num_attention_heads, read by F.embedding and added to the scores)."""
    cfg = CASES[name]["config"]
    prompts, segments = cfg["prompt_types"] * cfg["prompt_length"], cfg["segment_types"]
    return (prompts + segments) * cfg["hidden_size"] + \
        (segments * segments + cfg["position_bias_num_buckets"]) * cfg["num_attention_heads"]


def _blt_tables(name) -> int:
    """BltModel's encoder_hash_tok_embedding (encoder_hash_byte_group_nb_functions x len(encoder_hash_byte_group_size)
    x encoder_hash_byte_group_vocab rows of the encoder's width) and BltPatcher's embed_tokens (its vocab_size rows of
    its width), both read by a lookup."""
    cfg = CASES[name]["config"]
    rows = cfg["encoder_hash_byte_group_nb_functions"] * len(cfg["encoder_hash_byte_group_size"]) * \
        cfg["encoder_hash_byte_group_vocab"]
    patcher = cfg["patcher_config"]
    return rows * cfg["encoder_config"]["hidden_size"] + patcher["vocab_size"] * patcher["hidden_size"]


def _zero_expert_rows(name) -> int:
    """LongCatFlashExperts allocates gate_up_proj for its zero experts too (n_routed_experts + zero_expert_num rows
    of 2 x expert_ffn_hidden_size), which no token multiplies (a zero expert returns its input)."""
    cfg = CASES[name]["config"]
    return cfg["num_layers"] * cfg["zero_expert_num"] * 2 * cfg["expert_ffn_hidden_size"] * cfg["hidden_size"]


# What a type's transformers model holds beyond maxflops' count, each from the fixture or the config, with its cause.
DEPARTS = {
    "gemma3n": ("the towers' embedders transformers runs on text (tables and projections: test_hf_zoo.eager_only)",
                lambda n: _tables(n, "embed_audio", "embed_vision") + _embedders(n)),
    "cpmant": ("the prompt rows of input_embedding, segment_embedding and position_bias.relative_attention_bias "
               "(lookups)", _cpmant_lookups),
    "longcat_flash": ("the zero experts' rows of gate_up_proj", _zero_expert_rows),
    "mllama": ("MllamaTextModel's token table has 8 rows beyond vocab_size (its image tokens')",
               lambda n: 8 * CASES[n]["config"]["hidden_size"]),
    "blt": ("the hash n-gram table (encoder_hash_tok_embedding) and the patcher's byte table (patcher.embed_tokens): "
            "lookups the config does not size for maxflops", _blt_tables),
    # ZambaMambaMixer's x_proj_weight and dt_proj_weight reach their matmul through a copy (expand, clone), which the
    # census does not follow: it files them under 'other'
    "zamba": ("the census's: x_proj and dt_proj through a copy", lambda n: -_zamba_projections(n)),
}


def test_the_fixture_is_transformers_own():
    meta = PARAMS["meta"]
    assert meta["transformers"] == "5.24.0" and meta["torch"].startswith("2.13")
    assert all(p["total"] == CASES[t]["params"] for t, p in PARAMS["params"].items())


@pytest.mark.parametrize("name", [t for t in READ if t in PARAMS["params"]])
def test_the_head_is_tied_as_transformers_ties_it(name, tmp_path):
    assert _loaded(name, tmp_path)["logits_via_embedding"] == PARAMS["params"][name]["tied"]


@pytest.mark.parametrize("name", [t for t in READ if t in PARAMS["params"]])
def test_the_parameters_are_transformers_matmul_weights_and_tables(name, tmp_path):
    f = PARAMS["params"][name]
    want = f["matmul"] + sum(f["embedding"].values())
    got = maxflops.parameters(_loaded(name, tmp_path))
    left_out = DEPARTS[name][1](name) if name in DEPARTS else 0
    assert got.total + left_out == want
    assert got.tied == f["tied"]


def test_every_departure_is_a_read_type():
    assert set(DEPARTS) <= set(READ)
