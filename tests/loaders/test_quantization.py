"""A quantized file's decode weight bytes: which weights transformers' quantizers convert (held to transformers'
own code, tests/fixtures/hf_quant), and how many bytes an element each format stores (derived from the tensors it
keeps, not from the loader's formula)."""

from __future__ import annotations

import json
import pathlib
import re
from fractions import Fraction

import pytest

import maxflops
from maxflops.loaders import load_hf_config
from maxflops.loaders.quantization import weight_rules

HERE = pathlib.Path(__file__).resolve().parent
FIXTURE = json.loads((HERE.parent / "fixtures" / "hf_quant" / "quantizers.json").read_text())
# the fixture model's Linear layers by maxflops' weight group
GROUPS = {"attention": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
          "mlp": ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")}
LAYERS = 2


def _converted_by_transformers(names: list) -> set:
    """{(group, layer)} and ('logits', None) for the Linear layers transformers converts (a group whole or not at
    all in every case of the fixture)."""
    out = set()
    for group, modules in GROUPS.items():
        for layer in range(LAYERS):
            hit = [f"model.layers.{layer}.{m}" in names for m in modules]
            assert all(hit) or not any(hit), (group, layer, names)
            if all(hit):
                out.add((group, layer))
    if "lm_head" in names:
        out.add(("logits", None))
    return out


def _converted_by_rules(rules: tuple) -> set:
    out = set()
    for rule in rules:
        m = re.fullmatch(r"(\w+)(?:@(\d+)(?:-(\d+))?)?=(.+)", rule)
        group, lo, hi = m.group(1), m.group(2), m.group(3)
        if group == "logits":
            out.add(("logits", None))
            continue
        if group in ("moe_routed", "moe_shared"):  # (the fixture's model has no experts)
            continue
        layers = range(LAYERS) if lo is None else range(int(lo), int(hi or lo) + 1)
        out |= {(group, i) for i in layers}
    return out


@pytest.mark.parametrize("case", sorted(FIXTURE["cases"]))
def test_the_weights_priced_quantized_are_those_transformers_converts(case):
    """Per weight group and layer, and the output head: AWQ keeps the head always, GPTQ converts only the decoder
    blocks' layers (those of modules_in_block_to_quantize where given), bitsandbytes and FP8 keep the head only
    where the file gives no skip list (an empty list converts it), each skip pattern matched as transformers does."""
    c = FIXTURE["cases"][case]
    assert _converted_by_rules(weight_rules(c["quantization_config"], LAYERS)) == \
        _converted_by_transformers(c["converted"])


def test_the_fixture_covers_each_way_the_head_goes():
    """The fixture is no run of one answer: the head converted and kept, layers converted and kept, per method."""
    by_method: dict = {}
    for c in FIXTURE["cases"].values():
        method = c["quantization_config"]["quant_method"]
        by_method.setdefault(method, set()).add("lm_head" in c["converted"])
    assert by_method["bitsandbytes"] == by_method["fp8"] == {True, False}
    assert by_method["awq"] == by_method["gptq"] == {False}
    assert FIXTURE["versions"]["transformers"] == "5.24.0"


# --- bytes an element, from the tensors each format stores for an in x out matrix --------------------------------

def _per_element(tensor_bytes: int, n_in: int, n_out: int) -> Fraction:
    return Fraction(tensor_bytes, n_in * n_out)


@pytest.mark.parametrize("bits,group", [(4, 128), (8, 128), (4, 32), (3, 64), (2, 64)])
def test_gptq_and_awq_bytes_are_their_packed_tensors(bits, group):
    """GPTQ/AWQ keep qweight (bits per element packed in int32), scales (float16 per group and output column) and
    qzeros (bits per group and output column, packed in int32): 133/256 bytes for 4 bits in groups of 128."""
    n_in, n_out = 4096, 1024
    qweight = n_in * n_out * bits // 8
    scales = (n_in // group) * n_out * 2
    qzeros = (n_in // group) * n_out * bits // 8
    want = _per_element(qweight + scales + qzeros, n_in, n_out)
    for method in ("gptq", "awq"):
        rules = weight_rules({"quant_method": method, "bits": bits, "group_size": group}, 1)
        assert rules[0] == f"attention={want}", (method, rules)
    if (bits, group) == (4, 128):
        assert want == Fraction(133, 256)


@pytest.mark.parametrize("double", [False, True])
def test_bitsandbytes_4bit_bytes_are_its_stored_tensors(double):
    """NF4 / FP4: half a byte an element and an absmax per block of 64 (float32); with double quantization the
    absmax is a byte per block and a float32 per 256 blocks (its per-tensor offset is a few bytes a matrix, not
    counted): 2113/4096."""
    n = 4096 * 1024
    data = n // 2
    absmax = n // 64 if double else n // 64 * 4
    nested = n // 64 // 256 * 4 if double else 0
    want = Fraction(data + absmax + nested, n)
    rules = weight_rules({"quant_method": "bitsandbytes", "load_in_4bit": True,
                          "bnb_4bit_use_double_quant": double}, 1)
    assert rules[0] == f"attention={want}"
    assert want == (Fraction(2113, 4096) if double else Fraction(9, 16))


def test_bits_must_be_a_number():
    with pytest.raises(ValueError, match=r"quantization_config 'bits': 'four': expected an integer"):
        weight_rules({"quant_method": "gptq", "bits": "four", "group_size": 128}, 1)
    with pytest.raises(ValueError, match=r"'modules_in_block_to_quantize': \['q_proj'\]: expected a list of lists"):
        weight_rules({"quant_method": "gptq", "bits": 4, "modules_in_block_to_quantize": ["q_proj"]}, 1)


# --- the files: decode weight bytes with the head at 16 bits ----------------------------------------------

def _decode_weight_gb(tmp_path, data: dict) -> float:
    p = tmp_path / "config.json"
    p.write_text(json.dumps(data))
    cfg = maxflops.load_config(str(p), mode="decode", per_device_batch_size=1, decode_kv_length=1)
    return maxflops.decode_traffic(cfg).to_dict()


QWEN25_7B = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584,
             "intermediate_size": 18944, "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
             "vocab_size": 152064, "tie_word_embeddings": False, "max_position_embeddings": 32768,
             "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "hidden_act": "silu"}


def test_a_published_awq_file_keeps_its_head_at_16_bits(tmp_path):
    """Qwen2.5-7B-Instruct-AWQ's block (bits 4, groups of 128, zero point, gemm): the layers at 133/256 bytes, the
    head (152,064 x 3,584) at 2: 4.480 GB of weights a decode step, not the 3.673 of a quantized head."""
    quant = {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq",
             "version": "gemm", "zero_point": True}
    loaded = load_hf_config(_write(tmp_path, {**QWEN25_7B, "quantization_config": quant}))
    rules = loaded.overrides["weight_bytes_rules"]
    assert "attention=133/256" in rules and "mlp=133/256" in rules and not any(r.startswith("logits") for r in rules)
    d = _decode_weight_gb(tmp_path, {**QWEN25_7B, "quantization_config": quant})
    per_layer = 2 * 3584 * 3584 + 2 * 3584 * 512 + 3 * 3584 * 18944  # q, o; k, v; gate, up, down
    want = Fraction(133, 256) * 28 * per_layer + 2 * 152064 * 3584
    assert d["components"]["weights"] == want
    assert round(float(want) / 1e9, 3) == 4.480


def _write(tmp_path, data: dict) -> pathlib.Path:
    p = tmp_path / "config.json"
    p.write_text(json.dumps(data))
    return p
