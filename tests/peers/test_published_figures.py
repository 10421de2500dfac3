"""Figures other projects published, each reproduced by the convention that made it, to its printed rounding.

- MaxText's documentation logs deepseek2-16b (per-device batch 24, 2,048 tokens) at 764.67 TFLOP per device per
  step, 94.54% of it learnable-weight FLOPs: MaxText 0.2.5's function, ``convention='maxtext'``.
- MaxText PR #1988 ("causal attention counts half the square") tabulates, per device at batch 4 and 8,192 tokens,
  each model before and after its change: llama2-7b 1,721.22 -> 1,510.11 TFLOP, deepseek2-16b 704.60 -> 593.27.
  After: ``'maxtext'``; before: ``'maxtext_pr1988_before'`` (the whole square), which MFU tables published before
  it still use.
- PaLM (Chowdhery et al. 2022, table 3 and appendix B): 540B trained at 46.2% MFU, 238.3K tokens/s on 6,144 TPU v4
  chips (275 TFLOP/s each), 2,048 tokens, counted as 6N + 12 L H Q T per token: ``convention='palm'``; its N is
  the count's learnable weights (540.35B, as published).
- Llama 3 (Dubey et al. 2024, section 3.4): the 405B flagship trained on 15.6T tokens at 3.8e25 FLOPs, 6N per token
  with N the whole model's parameters: ``convention='six_n'``.
- GPT-3 (Brown et al. 2020, table D.1): 175B, 300B tokens, 3.14e23 FLOPs, 6N per token (attention left out):
  ``'six_n'`` on GPT-3's shape (96 layers of 12,288, 96 heads, a 4x GELU MLP, a tied table of 50,257).
- Kaplan et al. 2020 (table 1): N = 2 d_model n_layer (2 d_attn + d_ff), the vocabulary and positions left out, C =
  6N per token: ``'kaplan'``, exactly.
"""

from fractions import Fraction

import pytest

import maxflops


def tflop(model, convention, **keys):
    return maxflops.count(maxflops.load_config(model, convention=convention, **keys))


@pytest.mark.parametrize("model,before,after", [("llama2-7b", "1721.22", "1510.11"),
                                                ("deepseek2-16b", "704.60", "593.27")])
def test_maxtext_pr1988_table_before_and_after(model, before, after):
    keys = dict(max_target_length=8192, per_device_batch_size=4)
    assert f"{tflop(model, 'maxtext_pr1988_before', **keys).total / 1e12:.2f}" == before
    assert f"{tflop(model, 'maxtext', **keys).total / 1e12:.2f}" == after


def test_maxtext_docs_deepseek2_16b_line():
    b = tflop("deepseek2-16b", "maxtext", max_target_length=2048, per_device_batch_size=24)
    assert f"{b.total / 1e12:.2f}" == "764.67"
    assert f"{100 * b.learnable_weight / b.total:.2f}" == "94.54"


def test_the_whole_square_is_twice_the_half_square():
    """Only the causal pairs differ between the two: attention doubles, the weights stay."""
    keys = dict(max_target_length=4096, per_device_batch_size=1)
    a, b = tflop("llama3.1-8b", "maxtext", **keys), tflop("llama3.1-8b", "maxtext_pr1988_before", **keys)
    assert b.attention == 2 * a.attention and b.learnable_weight == a.learnable_weight
    assert b.hardware_flops == a.hardware_flops          # a reporting convention: what runs is the same


PALM_540B = dict(num_decoder_layers=118, emb_dim=18432, num_query_heads=48, num_kv_heads=1, head_dim=256,
                 mlp_dim=73728, mlp_activations=["silu", "linear"], vocab_size=256000, max_target_length=2048,
                 per_device_batch_size=1, logits_via_embedding=True)  # multi-query, SwiGLU, a tied 256K vocabulary


def test_palm_540b_mfu():
    b = maxflops.count(maxflops.model_config(**PALM_540B, convention="palm"))
    per_token = b.total / b.tokens
    assert f"{b.learnable_weight / b.tokens / 6 / 1e9:.2f}" == "540.35"            # N
    assert per_token == b.learnable_weight // b.tokens + 12 * 118 * 48 * 256 * 2048            # 6N + 12LHQT
    assert f"{100 * 238.3e3 * per_token / (6144 * 275e12):.1f}" == "46.2"
    exact = maxflops.count(maxflops.model_config(**PALM_540B))
    assert f"{100 * 238.3e3 * exact.total / exact.tokens / (6144 * 275e12):.1f}" == "46.0"   # causal pairs: not it


def test_llama3_405b_training_compute():
    b = tflop("llama3.1-405b", "six_n", max_target_length=8192, per_device_batch_size=1)
    assert f"{b.total / b.tokens * 15.6e12:.1e}" == "3.8e+25"
    p = maxflops.parameters(maxflops.load_config("llama3.1-405b"))
    assert b.total == 6 * p.total * b.tokens and b.attention == 0  # 6N: N every parameter, untied table and head


GPT3 = dict(num_decoder_layers=96, emb_dim=12288, num_query_heads=96, num_kv_heads=96, head_dim=128, mlp_dim=49152,
            mlp_activations=("gelu",), vocab_size=50257, logits_via_embedding=True, position_table_rows=2048,
            max_target_length=2048, per_device_batch_size=1, mode="train")


def test_gpt3_175b_training_compute():
    b = maxflops.count(maxflops.model_config(**GPT3, convention="six_n"))
    assert f"{b.total / b.tokens * 300e9:.2e}" == "3.14e+23"
    p = maxflops.parameters(maxflops.model_config(**GPT3))
    assert b.total == 6 * (p.total - p.components["position_embeddings"]) * b.tokens  # a tied table counts once


def test_kaplan_n_is_table_1s():
    d, L, ff = 768, 12, 3072  # (GPT-2 small's shape)
    c = maxflops.model_config(**{**GPT3, "num_decoder_layers": L, "emb_dim": d, "num_query_heads": 12,
                                 "num_kv_heads": 12, "head_dim": 64, "mlp_dim": ff}, convention="kaplan")
    b = maxflops.count(c)
    assert b.total == 6 * 2 * d * L * (2 * d + ff) * b.tokens
    exact = maxflops.count(c, convention="exact")
    assert exact.learnable_weight - b.total == 6 * 50257 * d * b.tokens  # the head, the vocabulary left out


@pytest.mark.parametrize("model", ["deepseek3-671b", "qwen3-next-80b-a3b", "kimi-linear-48b-a3b", "jamba-1.5-large"])
def test_6n_is_defined_wherever_the_exact_count_is(model):
    """The weights alone: any family, MTP counted as the exact count has it (its modules' weights)."""
    keys = dict(max_target_length=4096, per_device_batch_size=1, mtp_num_layers=0)
    six, exact = tflop(model, "six_n", **keys), tflop(model, "exact", **keys)
    p = maxflops.parameters(maxflops.load_config(model, **keys))
    assert six.attention == 0 and six.learnable_weight == exact.learnable_weight + 6 * p.embeddings * six.tokens


# Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models"), table 3: GPT models of
# a heads of h/a, l layers, a 4h GELU MLP, s = 2,048 and v = 51,200, no data parallelism (the batch is the GPU
# count); table 5: the iteration time with sequence parallelism and selective recomputation, the MFU and the HFU on
# A100s (312 TFLOP/s). name -> (a, h, l, global batch, GPUs, seconds, MFU %, HFU %)
KORTHIKANTI = {"22B": (64, 6144, 48, 4, 8, "1.10", "41.5", "43.7"),
               "175B": (96, 12288, 96, 64, 64, "13.75", "51.4", "52.8"),
               "530B": (128, 20480, 105, 280, 280, "37.83", "56.0", "57.0"),
               "1T": (160, 25600, 128, 512, 512, "71.49", "56.3", "57.0")}


def megatron_gpt(a, h, l, batch, **keys):
    """One of the papers' GPT models, the whole batch on one 'device' (the papers count per iteration)."""
    return maxflops.model_config(num_decoder_layers=l, emb_dim=h, num_query_heads=a, num_kv_heads=a, head_dim=h // a,
                                 mlp_dim=4 * h, mlp_activations=("gelu",), vocab_size=51200, logits_via_embedding=True,
                                 max_target_length=2048, per_device_batch_size=batch, mode="train", **keys)


def printed(text):
    """The interval a printed number stands for: half a unit of its last digit either side."""
    from decimal import Decimal
    d = Decimal(text)
    half = Decimal(1).scaleb(d.as_tuple().exponent) / 2
    return Fraction(d - half), Fraction(d + half)


@pytest.mark.parametrize("name", KORTHIKANTI)
def test_megatron_papers_closed_forms(name):
    """Each convention equals its paper's closed form, as an integer: eq. 7 (model), eq. 8 (selective
    recomputation, its s/3h) and Narayanan et al. 2021's eq. 3 (full recomputation, 96 and V/16lh)."""
    a, h, l, batch, *_ = KORTHIKANTI[name]
    B, s, v = batch, 2048, 51200
    forms = {"megatron_papers": 72 * B * l * s * h * h * (1 + Fraction(s, 6 * h) + Fraction(v, 12 * h * l)),
             "megatron_papers_selective": 72 * B * l * s * h * h * (1 + Fraction(s, 3 * h) + Fraction(v, 12 * h * l)),
             "megatron_papers_full": 96 * B * l * s * h * h * (1 + Fraction(s, 6 * h) + Fraction(v, 16 * l * h))}
    for convention, form in forms.items():
        b = maxflops.count(megatron_gpt(a, h, l, batch, convention=convention))
        assert form.denominator == 1 and b.total == form, convention
        assert b.hardware_flops == maxflops.count(megatron_gpt(a, h, l, batch)).hardware_flops  # what runs: the same
    assert maxflops.count(megatron_gpt(a, h, l, batch, convention="palm")).total == \
        maxflops.count(megatron_gpt(a, h, l, batch, convention="megatron_papers")).total      # PaLM's 6N + 12LHQT


@pytest.mark.parametrize("name", KORTHIKANTI)
def test_korthikanti_table_5_mfu_and_hfu(name):
    """Some iteration time inside its printed rounding gives both the MFU (eq. 7) and the HFU (eq. 8) as printed."""
    a, h, l, batch, gpus, seconds, mfu, hfu = KORTHIKANTI[name]
    low, high = printed(seconds)
    for convention, percent in (("megatron_papers", mfu), ("megatron_papers_selective", hfu)):
        flops = maxflops.count(megatron_gpt(a, h, l, batch, convention=convention)).total
        lo, hi = printed(percent)   # percent = 100 flops / (t gpus 312e12): the times that print it
        low = max(low, Fraction(100 * flops, gpus * 312 * 10 ** 12) / hi)
        high = min(high, Fraction(100 * flops, gpus * 312 * 10 ** 12) / lo)
    assert low < high, (name, float(low), float(high))
    exact = maxflops.count(megatron_gpt(a, h, l, batch)).total   # causal pairs: the papers' figures are above it
    t = float(printed(seconds)[0] + printed(seconds)[1]) / 2
    assert f"{100 * exact / (t * gpus * 312e12):.1f}" != mfu


def test_korthikanti_abstract_530b_on_2240_gpus():
    """The abstract's 54.2% MFU: the 530B model at 8-way data parallelism, 39.15 s an iteration."""
    a, h, l, batch, gpus, *_ = KORTHIKANTI["530B"]
    flops = maxflops.count(megatron_gpt(a, h, l, 8 * batch, convention="megatron_papers")).total
    assert f"{100 * flops / (39.15 * 8 * gpus * 312e12):.1f}" == "54.2"
